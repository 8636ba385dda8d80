/**
 * Edge lists on disk: reading SNAP-style text (https://snap.stanford.edu/data/) and writing the `edge.tsv` facts
 * file the programs in examples/graphs read.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { errorAt, VixenError, type Diagnostic, type SourceSpan } from '@vixen/queryplan';
import { edgeWeight, type Graph } from './graph.js';

/** Enough to show a user what is wrong without flooding the terminal. */
const MAX_DIAGNOSTICS = 20;

const FIELD = /[^ \t]+/g;
const NODE_ID = /^\d+$/;

function lineSpan(file: string, line: number, column: number, length: number, offset: number): SourceSpan {
  return {
    file,
    start: { line, column, offset: offset + column - 1 },
    end: { line, column: column + length, offset: offset + column - 1 + length },
  };
}

/**
 * Reads a SNAP edge list: one `src dst` pair per line, separated by spaces and/or tabs; lines starting with `#`
 * and blank lines are skipped. Node ids are non-negative int32; the graph has max id + 1 nodes. Edges are kept
 * as written (self-loops and repeats included: relations are sets, so repeats vanish on loading). Streams the
 * file line by line; bad lines are reported together (up to 20) with file:line:column.
 */
export async function loadSnapEdges(path: string): Promise<Graph> {
  let src = new Int32Array(1024);
  let dst = new Int32Array(1024);
  let m = 0;
  let maxId = -1;
  const problems: Diagnostic[] = [];
  const input = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  let offset = 0;
  try {
    for await (const text of lines) {
      lineNo++;
      const lineOffset = offset;
      // Offsets assume `\n` line ends (CRLF files shift them; lines and columns stay exact).
      offset += text.length + 1;
      const trimmed = text.trimStart();
      if (trimmed === '' || trimmed.startsWith('#')) continue;
      const fields = [...text.matchAll(FIELD)];
      if (fields.length !== 2) {
        const at = fields[Math.min(fields.length, 2)] ?? fields[0]!;
        problems.push(
          errorAt(
            `expected 2 node ids (src dst) separated by spaces or tabs, found ${fields.length} field${fields.length === 1 ? '' : 's'}`,
            lineSpan(path, lineNo, at.index + 1, at[0].length, lineOffset),
          ),
        );
      } else {
        const ids = fields.map((f) => {
          const ok = NODE_ID.test(f[0]) && Number(f[0]) < 2 ** 31;
          if (!ok) {
            problems.push(
              errorAt(
                `expected a node id (an integer in 0..${2 ** 31 - 1}), found '${f[0]}'`,
                lineSpan(path, lineNo, f.index + 1, f[0].length, lineOffset),
              ),
            );
          }
          return ok ? Number(f[0]) : -1;
        });
        if (ids[0]! >= 0 && ids[1]! >= 0) {
          if (m === src.length) {
            src = grow(src);
            dst = grow(dst);
          }
          src[m] = ids[0]!;
          dst[m] = ids[1]!;
          m++;
          maxId = Math.max(maxId, ids[0]!, ids[1]!);
        }
      }
      if (problems.length >= MAX_DIAGNOSTICS) break;
    }
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new VixenError({ severity: 'error', message: `cannot read edge list ${path}: ${reason}` });
  } finally {
    lines.close();
    input.destroy();
  }
  if (problems.length > 0) throw new VixenError(problems);
  return { nodes: maxId + 1, src: src.slice(0, m), dst: dst.slice(0, m) };
}

function grow(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * Writes `dir/<relation>.tsv` (tab separated, one edge per line), creating `dir` if needed; returns the path.
 * Writes in chunks so large graphs never become one string.
 */
export async function writeEdgeTsv(dir: string, graph: Graph, relation = 'edge', weighted = false): Promise<string> {
  const path = join(dir, `${relation}.tsv`);
  try {
    await mkdir(dir, { recursive: true });
    const out = createWriteStream(path, { encoding: 'utf8' });
    // `once` rejects when the stream emits 'error' while it waits, and every await below is on one.
    const CHUNK = 65_536;
    for (let i = 0; i < graph.src.length; i += CHUNK) {
      let text = '';
      const end = Math.min(graph.src.length, i + CHUNK);
      for (let k = i; k < end; k++) {
        const [x, y] = [graph.src[k]!, graph.dst[k]!];
        text += weighted ? `${x}\t${y}\t${edgeWeight(x, y)}\n` : `${x}\t${y}\n`;
      }
      if (!out.write(text)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new VixenError({ severity: 'error', message: `cannot write ${path}: ${reason}` });
  }
  return path;
}
