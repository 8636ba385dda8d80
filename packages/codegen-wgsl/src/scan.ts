/**
 * Exclusive prefix sum over u32, one element per thread: each workgroup scans its WG-element block
 * (workgroupScan) and emits the block total; the host scans the totals recursively and `scanAdd` adds them
 * back. Kernel-independent: every kernel that scans carries these modules.
 */
import { header, threadMain, workgroupScan } from './wgsl.js';

const blockIndex = `  let block = wid.x + wid.y * nwg.x;
  let i = block * WG + lid;
  let n = u[0].x;`;

/** The block scan, with subgroup operations (the `+subgroups` variant) or without. */
export function scanBlock(subgroups: boolean): string {
  const scan = workgroupScan(subgroups);
  return `${scan.enable}${header('scanBlock', ['data', 'totals'])}
${scan.decls}
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>${scan.builtins}) {
${blockIndex}
  var v = 0u;
  if (i < n) { v = data[i]; }
  scanSums(lid, v, ${scan.sg});
  if (i < n) { data[i] = sums[lid] - v; }
  if (lid == WG - 1u && block * WG < n) { totals[block] = sums[lid]; }
}
`;
}

export const SCAN_ADD = `${header('scanAdd', ['data', 'sums'])}
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
${blockIndex}
  if (i < n) { data[i] = data[i] + sums[block]; }
}
`;

/**
 * Overflow check of a finished exclusive scan of n u32 counts: the running sum wrapped past 2^32 - 1 exactly
 * where an offset decreases; then data[n] = 1 (the host zeroes it first). Per-row join counts can sum past u32.
 */
export const SCAN_WRAPPED = `${header('scanWrapped', ['data'])}
${threadMain(`  let n = u[0].x;
  if (i + 1u < n && data[i + 1u] < data[i]) { data[n] = 1u; }`)}`;
