/**
 * The columnar store end to end: `vixen import` then `vixen run --facts STORE` prints what the text files give
 * (every type, inline facts beside the store); the API, the reference interpreter and a Database read a store; and a
 * load reports its progress.
 * TPC-H from a store is in tpch.test.ts; broken stores are in the bad-input corpus.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '@vixen/cli';
import { compile, Database, openGpu, type Gpu } from '@vixen/runtime';
import type { LoadProgress } from '@vixen/io';

const program = `
t(i, u, l, f, d, b, dt, s) -> int32(i), uint32(u), int64(l), float32(f), decimal(d), boolean(b), date(dt), string(s).
tag(s, n) -> string(s), int32(n).
tag("inline", 9).
all(i, u, l, f, d, b, dt, s) <- t(i, u, l, f, d, b, dt, s).
tagged(i, s, n) <- t(i, _, _, _, _, _, _, s), tag(s, n).
ordered(s) <- t(_, _, _, _, _, _, _, s), s > "m".
`;
const lines = [
  '1,0,0,0,0,true,1970-01-01,plain',
  '-2147483648,4294967295,-9223372036854775808,-1.5e-7,-922337203685477.5808,false,0001-01-01,"quoted, with comma"',
  '2147483647,7,9223372036854775807,3.4e38,922337203685477.5807,true,9999-12-31,ünïcödé 😀',
  '3,8,-1,2.5,0.0001,false,2024-02-29,',
  '4,9,123456789012,1,12.5,true,1969-12-31,inline',
];

let root: string;
let gpu: Gpu;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'vixen-store-run-'));
  mkdirSync(join(root, 'text'));
  writeFileSync(join(root, 'program.logic'), program);
  writeFileSync(join(root, 'text', 't.csv'), lines.join('\n') + '\n');
  writeFileSync(join(root, 'text', 'tag.csv'), 'plain,1\n');
  gpu = await openGpu();
});
afterAll(() => {
  gpu?.dispose();
  rmSync(root, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(['node', 'vixen', ...args], (s) => (out += s), (s) => (err += s));
  return { code, out, err };
}

describe('columnar store', () => {
  it('vixen run prints from a store what it prints from the text files', async () => {
    const imported = await cli('import', join(root, 'program.logic'), '--facts', join(root, 'text'), '-o', join(root, 'store'));
    expect(imported, imported.err).toMatchObject({ code: 0, out: '' });
    expect(imported.err).toMatch(/^wrote .*store: 2 relations, 6 rows, 6 strings, [\d.]+ MiB\n$/);
    const fromText = await cli('run', join(root, 'program.logic'), '--facts', join(root, 'text'), '--format', 'csv');
    const fromStore = await cli('run', join(root, 'program.logic'), '--facts', join(root, 'store'), '--format', 'csv', '--stats');
    expect(fromText.code, fromText.err).toBe(0);
    expect(fromStore.code, fromStore.err).toBe(0);
    expect(fromStore.out).toBe(fromText.out);
    // Every row, the inline fact joined with the stored one, string order kept.
    expect(fromStore.out).toMatch(/^# all\ni,u,l,f,d,b,dt,s\n(.*\n){5}\n/);
    expect(fromStore.out).toContain('\n# tagged\ni,s,n\n1,plain,1\n4,inline,9\n');
    expect(fromStore.out).toContain('\n# ordered\ns\nplain\n"quoted, with comma"\nünïcödé 😀\n');
    expect(fromStore.err).toMatch(/facts read on the host: [\d.]+ ms/);
  });

  it('vixen import --columns read stores the columns one program reads; another program is told what is missing', async () => {
    const narrow = join(root, 'narrow.logic');
    writeFileSync(narrow, `${program.split('\n').slice(0, 4).join('\n')}\nnamed(i, s) <- t(i, _, _, _, _, _, _, s), tag(s, _).\n`);
    const imported = await cli('import', narrow, '--facts', join(root, 'text'), '-o', join(root, 'narrow-store'), '--columns', 'read');
    expect(imported, imported.err).toMatchObject({ code: 0, out: '' });
    const fromText = await cli('run', narrow, '--facts', join(root, 'text'), '--format', 'csv', '--output', 'named');
    const fromStore = await cli('run', narrow, '--facts', join(root, 'narrow-store'), '--format', 'csv', '--output', 'named');
    expect(fromStore.code, fromStore.err).toBe(0);
    expect(fromStore.out).toBe(fromText.out);
    expect(fromStore.out).toBe('i,s\n1,plain\n4,inline\n');
    const wider = await cli('run', join(root, 'program.logic'), '--facts', join(root, 'narrow-store'), '--format', 'csv');
    expect(wider.code).toBe(1);
    expect(wider.err).toContain(`error: relation t: store ${join(root, 'narrow-store')} omits columns 2 (u), 3 (l), 4 (f), 5 (d), 6 (b), 7 (dt), which the program reads`);
  });

  it('the API, the reference interpreter and a Database read a store, and a load reports its progress', async () => {
    const store = join(root, 'store');
    const prog = compile(program);
    const progress: LoadProgress[] = [];
    const fresh = await prog.run({ gpu, factsDir: store, onLoadProgress: (p) => progress.push(p) });
    expect(fresh.relations).toEqual((await prog.run({ gpu, factsDir: join(root, 'text') })).relations);
    expect(await prog.interpret({ factsDir: store })).toEqual(fresh.relations);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.map((p) => p.bytesDone)).toEqual([...progress.map((p) => p.bytesDone)].sort((a, b) => a - b));
    expect(progress.at(-1)!.bytesDone).toBe(progress.at(-1)!.bytesTotal);
    const db = new Database(gpu, store);
    try {
      expect((await db.run(prog)).relations).toEqual(fresh.relations);
      const again = await db.run(prog);
      expect(again.relations).toEqual(fresh.relations);
      // t stays resident; tag, which has inline facts, is loaded for each run.
      expect(again.stats.uploads.map((u) => u.name)).toEqual(['tag']);
    } finally {
      db.clear();
    }
  });

  it('a relation past one storage binding loads from a store in chunks, strings of two dictionaries included', async () => {
    const dir = join(root, 'big');
    mkdirSync(join(dir, 'text'), { recursive: true });
    const big = `r(k, a, l, b) -> int32(k), string(a), int64(l), string(b).\nout(k, a, l, b) <- r(k, a, l, b), a < "s3", k > -1.\n`;
    writeFileSync(join(dir, 'big.logic'), big);
    // 3000 rows of 5 words: 60 KB, four chunks of a 16 KiB binding; b's strings partly repeat a's.
    const rows = Array.from({ length: 3000 }, (_, k) => `${k},s${(k * 7) % 101},${(k - 1500) * 2 ** 33},${k % 3 === 0 ? `s${k % 101}` : `t${k % 13}`}`);
    writeFileSync(join(dir, 'text', 'r.csv'), rows.join('\n') + '\n');
    const imported = await cli('import', join(dir, 'big.logic'), '--facts', join(dir, 'text'), '-o', join(dir, 'store'));
    expect(imported.code, imported.err).toBe(0);
    const small = await openGpu({ maxStorageBufferBindingSize: 16 * 1024 });
    try {
      const prog = compile(big);
      const fromStore = await prog.run({ gpu: small, factsDir: join(dir, 'store') });
      const fromText = await prog.run({ gpu, factsDir: join(dir, 'text') });
      expect(fromStore.relations.get('out')!.length).toBeGreaterThan(500);
      expect(fromStore.relations).toEqual(fromText.relations);
    } finally {
      small.dispose();
    }
  });

  it('a Soufflé program is told that it reads text', async () => {
    writeFileSync(join(root, 'e.dl'), '.decl e(x: number)\n.input e\n.decl p(x: number)\n.output p\np(x) :- e(x).\n');
    const r = await cli('run', join(root, 'e.dl'), '--facts', join(root, 'store'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/store is a columnar store: a Soufflé program reads its \.input files as text/);
  });
});
