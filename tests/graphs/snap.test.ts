/** The SNAP edge-list loader and the edge.tsv writer. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { renderDiagnostics, VixenError } from '@vixen/queryplan';
import { edgeRows, loadSnapEdges, rmat, writeEdgeTsv } from '@vixen/bench';

const dir = mkdtempSync(join(tmpdir(), 'vixen-snap-'));
let n = 0;
function file(text: string): string {
  const path = join(dir, `g${n++}.txt`);
  writeFileSync(path, text);
  return path;
}

async function loadError(path: string): Promise<VixenError> {
  try {
    await loadSnapEdges(path);
  } catch (e) {
    if (e instanceof VixenError) return e;
    throw e;
  }
  throw new Error('expected a VixenError');
}

describe('loadSnapEdges', () => {
  test('comments, blank lines, tabs and runs of spaces, CRLF, no final newline', async () => {
    const path = file('# Directed graph: test.txt\n# FromNodeId\tToNodeId\n0\t1\n1   2\r\n\n  2 \t 0  \n   # indented comment\n5 5');
    const g = await loadSnapEdges(path);
    expect(edgeRows(g)).toEqual([[0, 1], [1, 2], [2, 0], [5, 5]]);
    expect(g.nodes).toBe(6);
  });

  test('repeated edges are kept as written; an empty file is an empty graph', async () => {
    expect(edgeRows(await loadSnapEdges(file('3 4\n3 4\n')))).toEqual([[3, 4], [3, 4]]);
    const empty = await loadSnapEdges(file('# nothing\n'));
    expect(empty.nodes).toBe(0);
    expect(empty.src.length).toBe(0);
  });

  test('many lines grow the arrays', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => [i, (i * 7) % 5000]);
    const g = await loadSnapEdges(file(rows.map((r) => r.join(' ')).join('\n')));
    expect(edgeRows(g)).toEqual(rows);
  });

  test('bad lines: located diagnostics with file, line and column, all reported', async () => {
    const path = file('# header\n0 1\n1 x\n2 3 4\n-1 2\n7\n4 99999999999\n');
    const e = await loadError(path);
    expect(e.diagnostics.map((d) => [d.span?.file, d.span?.start.line, d.span?.start.column])).toEqual([
      [path, 3, 3],
      [path, 4, 5],
      [path, 5, 1],
      [path, 6, 1],
      [path, 7, 3],
    ]);
    expect(e.diagnostics[0]!.message).toMatch(/expected a node id .* found 'x'/);
    expect(e.diagnostics[1]!.message).toMatch(/expected 2 node ids .* found 3 fields/);
    expect(e.diagnostics[3]!.message).toMatch(/found 1 field$/);
    const text = renderDiagnostics(e.diagnostics, new Map([[path, readFileSync(path, 'utf8')]]));
    expect(text).toContain(`${path}:3:3: error:`);
    expect(text).toContain('3 | 1 x\n  |   ^');
  });

  test('a missing file is a VixenError naming it', async () => {
    const e = await loadError(join(dir, 'no-such-file.txt'));
    expect(e.message).toMatch(/cannot read edge list .*no-such-file\.txt/);
  });
});

describe('writeEdgeTsv', () => {
  test('writes <dir>/edge.tsv tab separated, creating the directory; reads back through the SNAP loader', async () => {
    const out = join(dir, 'nested', 'facts');
    const g = rmat({ scale: 7, edgeFactor: 4, seed: 2 });
    const path = await writeEdgeTsv(out, g);
    expect(path).toBe(join(out, 'edge.tsv'));
    const text = readFileSync(path, 'utf8');
    expect(text.split('\n')[0]).toMatch(/^\d+\t\d+$/);
    expect(text.endsWith('\n')).toBe(true);
    expect(edgeRows(await loadSnapEdges(path))).toEqual(edgeRows(g));
  });

  test('other relation names; unwritable targets are VixenErrors', async () => {
    const g = { nodes: 2, src: Int32Array.from([0]), dst: Int32Array.from([1]) };
    expect(readFileSync(await writeEdgeTsv(dir, g, 'assign'), 'utf8')).toBe('0\t1\n');
    const notDir = file('x');
    await expect(writeEdgeTsv(notDir, g)).rejects.toThrow(VixenError);
  });
});
