/**
 * Which negated atoms the anti-joins pass makes negated probes of fused pipelines (kernel-ir's anti-joins.ts), on
 * the golden cases of negation shapes (tests/cases/negation-*, whose answers golden.test.ts checks on the device
 * under every join strategy): every shape, with a key or without (a probe of a key of no words: "any row?"),
 * outside fixpoint loops and inside them, leaves no join of the negated relation and no difference with its matches.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { validateKir, type KirKernel, type KirProgram } from '@vixen/kernel-ir';
import { compile, compileFile, openGpu, type JoinStrategy } from '@vixen/runtime';

const caseFile = (name: string): string => join(import.meta.dirname, 'cases', name, 'program.logic');

/** The kernels each block launches, by block label. */
function launched(p: KirProgram): Map<string, KirKernel[]> {
  return new Map(p.blocks.map((b) => [b.label, b.commands.flatMap((c) => (c.kind === 'launch' ? [p.kernels[c.kernel]!] : []))]));
}

/** Blocks that branch back to themselves: the bodies of fixpoint loops. */
const loopBodies = (p: KirProgram): string[] => p.blocks.filter((b) => b.terminator.kind === 'branch' && b.terminator.ifFalse === b.label).map((b) => b.label);

/** The names of the variables difference kernels write. */
const differences = (ks: readonly KirKernel[], p: KirProgram): string[] => ks.filter((k) => k.kind === 'difference').map((k) => p.variables[k.output]!.name);

const negatedProbes = (ks: readonly KirKernel[]): number => ks.reduce((n, k) => n + (k.kind === 'pipeline' ? k.probes.filter((pr) => pr.negated).length : 0), 0);

/** Negated probes without key columns: "does the negated relation (of the rows its filter keeps) have any row?". */
const keylessProbes = (ks: readonly KirKernel[]): number => ks.reduce((n, k) => n + (k.kind === 'pipeline' ? k.probes.filter((pr) => pr.negated && pr.buildKeys.length === 0).length : 0), 0);

describe.each<JoinStrategy>(['auto', 'hash'])('anti-joins under %s joins', (joinStrategy) => {
  test('every negation shape becomes a negated probe, the keyless ones too', () => {
    const p = compileFile(caseFile('negation-shapes'), { joinStrategy }).kir;
    const entry = launched(p).get(p.entry)!;
    expect(differences(entry, p)).toEqual([]);
    // One for each rule but twonegs, two in twonegs (whose `!n(x, _)` the plan shares with prefix's rows).
    expect(negatedProbes(entry)).toBe(15);
    expect(keylessProbes(entry)).toBe(2);
  });

  test('a keyless negation is a probe of no key words, with no join of its relation, inside loops too', () => {
    const flat = compileFile(caseFile('negation-keyless'), { joinStrategy }).kir;
    const entry = launched(flat).get(flat.entry)!;
    expect(differences(entry, flat)).toEqual([]);
    expect(entry.filter((k) => k.kind === 'mergeJoin' || k.kind === 'hashJoin')).toEqual([]);
    // unflagged to noloop4 one each (keyedtoo's `!nothing(_)` is unnothing's rows: the plan shares them).
    expect(keylessProbes(entry)).toBe(8);

    const p = compileFile(caseFile('negation-keyless-recursion'), { joinStrategy }).kir;
    const blocks = launched(p);
    const loops = loopBodies(p);
    expect(loops).toHaveLength(5);
    for (const label of loops) expect(differences(blocks.get(label)!, p), label).toEqual([expect.stringMatching(/^\$new_/)]);
    // far's own loop negates nothing; path's negates two relations.
    expect(loops.map((l) => keylessProbes(blocks.get(l)!))).toEqual([0, 1, 1, 1, 2]);
  });

  test("negations inside fixpoint loops are probes of the loops' pipelines: each loop keeps only its new-rows difference", () => {
    const p = compileFile(caseFile('negation-in-recursion'), { joinStrategy }).kir;
    const blocks = launched(p);
    const loops = loopBodies(p);
    expect(loops).toHaveLength(5);
    for (const label of loops) {
      const ks = blocks.get(label)!;
      expect(differences(ks, p), label).toEqual([expect.stringMatching(/^\$new_/)]);
      expect(negatedProbes(ks), label).toBeGreaterThan(0);
    }
  });

  test('a negated relation without rows is probed like any other', () => {
    const p = compileFile(caseFile('negation-empty'), { joinStrategy }).kir;
    const blocks = launched(p);
    expect(differences(blocks.get(p.entry)!, p)).toEqual([]);
    const [loop] = loopBodies(p);
    expect(differences(blocks.get(loop!)!, p)).toEqual(['$new_walk']);
  });
});

test('a probe may lack a key only where it is negated', () => {
  const p = compileFile(caseFile('negation-keyless')).kir;
  expect(validateKir(p)).toEqual([]);
  const keyless = p.kernels.find((k) => k.kind === 'pipeline' && k.probes.some((pr) => pr.buildKeys.length === 0))!;
  const joined = (k: KirKernel): KirKernel => (k.kind === 'pipeline' ? { ...k, probes: k.probes.map(({ negated: _, ...pr }) => pr) } : k);
  const errors = validateKir({ ...p, kernels: p.kernels.map((k) => (k === keyless ? joined(k) : k)) });
  expect(errors.map((d) => d.message)).toEqual([`kernel ${keyless.id} (pipeline) probe 0: a hash probe needs at least one key`]);
});

test('a loop launches fewer kernels an iteration with its anti-joins as probes than sort-merge joins and differences', () => {
  const file = caseFile('negation-in-recursion');
  const perLoop = (strategy: JoinStrategy): number[] => {
    const p = compileFile(file, { joinStrategy: strategy }).kir;
    return loopBodies(p).map((l) => launched(p).get(l)!.length);
  };
  const [probed, merged] = [perLoop('auto'), perLoop('sort-merge')];
  probed.forEach((n, i) => expect(n).toBeLessThan(merged[i]!));
});

test('negations of a relation past one binding (its rows in parts) match the reference interpreter', async () => {
  // 20,000 rows of 2 words pass a 64 KiB binding: the keyless and the keyed anti-join run part by part.
  const dir = mkdtempSync(join(tmpdir(), 'vixen-anti-'));
  const gpu = await openGpu({ maxStorageBufferBindingSize: 65536 });
  try {
    writeFileSync(join(dir, 'big.tsv'), Array.from({ length: 20000 }, (_, i) => `${i * 3}\t${i % 7}\n`).join(''));
    writeFileSync(join(dir, 'e.tsv'), [1, 3, 6, 8, 30000, 60001].map((x) => `${x}\n`).join(''));
    const program = compile(`big(x, y) -> int32(x), int32(y).
e(x) -> int32(x).
none(x) <- e(x), !big(_, _).
nofive(x) <- e(x), !big(_, 5).
noseven(x) <- e(x), !big(_, 7).
absent(x) <- e(x), !big(x, _).
`);
    const [run, reference] = [await program.run({ factsDir: dir, gpu }), await program.interpret({ factsDir: dir })];
    for (const [rel, rows] of reference) expect(run.relations.get(rel), rel).toEqual(rows);
    expect(reference.get('noseven')).toHaveLength(6);
    expect(reference.get('absent')).toHaveLength(3);
  } finally {
    gpu.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
