/**
 * Evenly spaced sample rows of a relation in chunks, gathered on the device (runtime gpu/chunks.ts rangePartition
 * picks a chunked sort's splitters from them): sample s of S is row floor(s * rows / S), thread t of a chunk's
 * dispatch copies sample s0 + t. One dispatch a chunk, not one copy command a sample (768 of them for a join output
 * of three bindings).
 */
import { header, threadMain } from '../wgsl.js';

/**
 * The pass for rows of `width` words. (rows, out, u) u0 = (this chunk's samples, its first sample s0, q, r) with
 * rows = q * S + r, u1 = (S, the chunk's first row in the relation): row floor(s * rows / S) = s * q + s * r / S,
 * exact in u32 while S * S < 2^32.
 */
export function sampleRowsShaders(width: number): Record<string, string> {
  const body = `  if (i >= u[0].x) { return; }
  let s = u[0].y + i;
  let row = s * u[0].z + (s * u[0].w) / u[1].x - u[1].y;
  for (var k = 0u; k < ${width}u; k++) { out[s * ${width}u + k] = rows[row * ${width}u + k]; }`;
  return { sampleRows: `${header('sampleRows', ['rows', 'out'], 2)}${threadMain(body)}` };
}
