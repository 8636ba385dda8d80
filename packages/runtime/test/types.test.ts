/** The full scalar type set end to end: facts files, API facts, program files and the GPU against the interpreter. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VixenError, parseDecimal } from '@vixen/queryplan';
import { loadFactsFile } from '@vixen/io';
import { compile, openGpu, Program, type Gpu } from '../src/index.js';

const SOURCE = `
item(k, u, f, d, b, day) -> int32(k), uint32(u), float32(f), decimal(d), boolean(b), date(day).
out(k, u, f, d, b, day) <- item(k, u0, f0, d0, b, day), u = u0 * 2u, f = f0 / 4, d = d0 * 1.5d,
    day >= date:parse["2000-01-01"].
`;

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

describe('typed facts and values', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vixen-types-'));
  writeFileSync(join(dir, 'item.csv'), '1,4000000000,0.1,19.99,true,2024-01-31\n2,3,-2.5,-0.0001,false,1999-12-31\n3,0,1e-3,7,1,2000-01-01\n');

  it('loads every type from a facts file', async () => {
    const columns = compile(SOURCE).relations.find((r) => r.name === 'item')!.columns;
    const rows = await loadFactsFile(join(dir, 'item.csv'), columns);
    expect(rows[0]).toEqual([1, 4000000000, Math.fround(0.1), 199900n, true, 19753]);
    expect(rows[2]).toEqual([3, 0, Math.fround(1e-3), 70000n, true, 10957]);
  });

  it('reads decimal text in every form as parseDecimal does', async () => {
    const good = ['+1.5', '-0', '0.1', '-0.0001', '12345678901.1234', '123456789012.5', ' 2.25 ', '7'];
    const columns = [{ name: 'd', type: 'decimal' as const }];
    writeFileSync(join(dir, 'dec.csv'), good.map((t) => `${t}\n`).join(''));
    const rows = await loadFactsFile(join(dir, 'dec.csv'), columns);
    expect(rows.map((r) => r[0])).toEqual(good.map((t) => parseDecimal(t.trim())));
    for (const bad of ['1.', '.5', '1.2.3', '--1', '1e3', '1.23456']) {
      writeFileSync(join(dir, 'dec-bad.csv'), `${bad}\n`);
      await expect(loadFactsFile(join(dir, 'dec-bad.csv'), columns)).rejects.toThrow(/expected decimal/);
    }
  });

  it('reports bad typed fields with their place', async () => {
    writeFileSync(join(dir, 'bad.csv'), '1,5,x,1.00001,maybe,2024-02-30\n');
    const columns = compile(SOURCE).relations.find((r) => r.name === 'item')!.columns;
    const e = await loadFactsFile(join(dir, 'bad.csv'), columns).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(VixenError);
    expect((e as VixenError).diagnostics.map((d) => [d.span?.start.column, d.message.split(' of ')[0]])).toEqual([
      [5, 'expected float32 in column 3 (f)'],
      [7, 'expected decimal in column 4 (d)'],
      [15, 'expected boolean in column 5 (b)'],
      [21, 'expected date in column 6 (day)'],
    ]);
  });

  it('runs on the GPU as the interpreter does, also from a program file', async () => {
    const program = compile(SOURCE);
    const reference = await program.interpret({ factsDir: dir });
    expect(reference.get('out')).toEqual([
      [1, 3705032704, Math.fround(Math.fround(0.1) / 4), 299850n, true, 19753],
      [3, 0, Math.fround(Math.fround(1e-3) / 4), 105000n, true, 10957],
    ]);
    const onGpu = await program.run({ factsDir: dir, gpu });
    expect(onGpu.relations.get('out')).toEqual(reference.get('out'));
    const reloaded = Program.fromJSON(JSON.parse(JSON.stringify(program.toJSON())));
    expect((await reloaded.run({ factsDir: dir, gpu })).relations.get('out')).toEqual(reference.get('out'));
  });
});
