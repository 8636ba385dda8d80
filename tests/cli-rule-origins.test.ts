/**
 * The debugging views say where a rule went: `plan` (query plan and kernel IR) and `explain` name the source rules
 * (file:line and the rule's text, shortened) of every command and kernel; fused kernels name every rule fused.
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { compileFile, Program } from '@vixen/runtime';
import { cli } from './helpers/cli.js';

const root = join(import.meta.dirname, '..');
const closure = join(root, 'examples/transitive-closure.logic');
const recursive = 'transitive-closure.logic:7: path(x, z) <- path(x, y), edge(y, z)';

describe('rule origins in the debugging views', () => {
  test('plan: the recursive rule names its join and union; bookkeeping names nothing', async () => {
    const r = await cli('plan', closure);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`$t2 := mapJoin $delta_path, edge on l#1 = r#0 project (#0, #3)  // ${recursive}\n`);
    expect(r.out).toContain(`$new_path := union $new_path, $t2  // ${recursive}\n`);
    expect(r.out).toContain('  $new_path := difference $new_path, path\n');
  });

  test('plan --ir kernel: the join kernels name the recursive rule', async () => {
    const r = await cli('plan', closure, '--ir', 'kernel');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`:= mergeJoin .*  // k\\d+ from ${recursive.replace(/[()]/g, '\\$&')}\\n`));
    expect(r.out).toMatch(/path := copy edge {2}\/\/ k\d+ from transitive-closure\.logic:6: path\(x, y\) <- edge\(x, y\)\n/);
  });

  test('a fused pipeline names the rules it fused (SSB Q1.1), in the kernel IR and in explain', async () => {
    const r = await cli('plan', join(root, 'examples/ssb/q1.1.logic'), '--ir', 'kernel');
    expect(r.code).toBe(0);
    const pipeline = r.out.split('\n').find((l) => l.includes(':= pipeline lineorder'))!;
    expect(pipeline).toMatch(/\/\/ k\d+ \(fused 2 kernels: scan\+filter, 1 probe, project\) from q1\.1\.logic:7: line\(o, ln, x\) <- lineorder\(/);
    const explained = await cli('explain', join(root, 'examples/ssb/q1.1.logic'));
    expect(explained.code).toBe(0);
    expect(explained.out).toContain(pipeline);
    expect(explained.out).toMatch(/:= mapFilter dwdate where .* {2}\/\/ q1\.1\.logic:6: day\(dk\) <- dwdate\(/);
  });

  test('a compiled program file keeps the kernels\' rules', () => {
    const compiled = compileFile(closure);
    const join = compiled.kir.kernels.find((k) => k.kind === 'mergeJoin')!;
    expect(join.rules).toEqual([{ file: closure, line: 7, text: 'path(x, z) <- path(x, y), edge(y, z)' }]);
    const loaded = Program.fromJSON(JSON.parse(JSON.stringify(compiled.toJSON())));
    expect(loaded.kir.kernels.map((k) => k.rules)).toEqual(compiled.kir.kernels.map((k) => k.rules));
  });
});
