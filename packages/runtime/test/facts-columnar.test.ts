/** Columnar facts end to end: file, API and inline facts share one interner and reach the GPU remapped. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, openGpu, type Gpu } from '../src/index.js';

const SOURCE = `
sale(k, who, amount, big) -> int32(k), string(who), decimal(amount), int64(big).
region(who, r) -> string(who), string(r).
bonus(who) -> string(who).
bonus("zed"). bonus("name7").
big(who, r, t, a) <- sale(k, who, a, b), region(who, r), k % 97 = 3, b > 100000000000, t = string:substring[who, 2, 3].
named(who, t) <- bonus(who), t = string:substring[who, 1, 2].
`;

let gpu: Gpu;
const dir = mkdtempSync(join(tmpdir(), 'vixen-columnar-'));
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => {
  gpu?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('columnar facts', () => {
  it('runs file, API and inline facts on the GPU as the interpreter does', async () => {
    const lines: string[] = [];
    // Many chunks (the first holds 16 rows) and repeated strings.
    for (let i = 0; i < 5000; i++) lines.push(`${i},name${i % 40},${(i * 37) % 1000}.${i % 100},${i * 100000007}`);
    writeFileSync(join(dir, 'sale.csv'), lines.join('\n') + '\n');
    const regions = Array.from({ length: 40 }, (_, i) => [`name${i}`, i % 2 ? 'east' : 'west']);
    const program = compile(SOURCE);
    const options = { factsDir: dir, facts: { region: regions } };
    const reference = await program.interpret(options);
    expect(reference.get('big')!.length).toBeGreaterThan(10);
    expect(reference.get('named')).toEqual([
      ['name7', 'na'],
      ['zed', 'ze'],
    ]);
    const onGpu = await program.run({ ...options, gpu });
    expect(onGpu.relations.get('big')).toEqual(reference.get('big'));
    expect(onGpu.relations.get('named')).toEqual(reference.get('named'));
  });
});
