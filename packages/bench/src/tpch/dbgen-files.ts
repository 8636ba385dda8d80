/**
 * The generators' file side: `.tbl` writers, and the TPC-H and SSB generators run into files on this thread
 * (generate) or on the worker pool (generateParallel). The rows themselves are dbgen.ts's, which imports no Node
 * built-in, so that a browser page can make them too (dbgenText).
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { runInWorker } from '@vixen/io';
import {
  Gen,
  scaling,
  startTables,
  TPCH,
  type ChunkedTables,
  type DbgenOptions,
  type DbgenResult,
  type GenResult,
  type ParallelOptions,
  type StartTables,
  type TableChunkResult,
  type TpchSizes,
  type TpchTable,
} from './dbgen.js';

/** Buffered writer of one `.tbl` file: rows are appended as text and flushed in ~1 MiB writes. */
export class TblWriter {
  private fd: number;
  private parts: string[] = [];
  private size = 0;
  rows = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }

  row(line: string): void {
    this.parts.push(line);
    this.size += line.length;
    this.rows++;
    if (this.size > 1 << 20) this.flush();
  }

  private flush(): void {
    if (this.parts.length > 0) writeSync(this.fd, this.parts.join(''));
    this.parts = [];
    this.size = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

/** Checks the scale factor and makes the output folder; the seeded source and row counts scaled by SF (at least 1). */
function startGen(options: DbgenOptions): { g: Gen; scaled: (base: number) => number } {
  const scaled = scaling(options.sf);
  mkdirSync(options.out, { recursive: true });
  return { g: new Gen(options.seed ?? 1), scaled };
}

/** Writes region.tbl and nation.tbl; the sizes of the other tables. */
function writeStart(g: Gen, options: DbgenOptions, scaled: (base: number) => number, rows: Record<TpchTable, number>): TpchSizes {
  const region = new TblWriter(join(options.out, 'region.tbl'));
  const nation = new TblWriter(join(options.out, 'nation.tbl'));
  const z = startTables(g, options.sf, scaled, (l) => region.row(l), (l) => nation.row(l));
  region.close();
  nation.close();
  rows.region = region.rows;
  rows.nation = nation.rows;
  return z;
}

export const dbgen = (options: DbgenOptions): DbgenResult => generate(TPCH, options, writeStart);

/** dbgen on every core (generateParallel): the same bytes. */
export const dbgenParallel = (options: ParallelOptions): Promise<DbgenResult> => generateParallel(TPCH, options, writeStart);

/** Every table on this thread. */
export function generate<T extends string, F extends string, Z>(c: ChunkedTables<T, F, Z>, options: DbgenOptions, start: StartTables<F, Z>): GenResult<F> {
  const t0 = performance.now();
  const { g, scaled } = startGen(options);
  const rows = {} as Record<F, number>;
  const z = start(g, options, scaled, rows);
  for (const t of c.tables) {
    const writers = c.files[t].map((f) => new TblWriter(join(options.out, `${f}.tbl`)));
    c.rows(g, z, t, 0, c.count(z, t), writers.map((w) => (line: string) => w.row(line)));
    writers.forEach((w, i) => {
      w.close();
      rows[c.files[t][i]!] = w.rows;
    });
  }
  return { rows, ms: performance.now() - t0 };
}

/**
 * `generate` on every core: one pass on this thread only advances the random stream (no text), noting its state
 * at the start of each chunk of rows, and worker threads make the chunks' text from there, so the files are
 * byte-identical to generate's for the same seed.
 */
export async function generateParallel<T extends string, F extends string, Z>(c: ChunkedTables<T, F, Z>, options: ParallelOptions, start: StartTables<F, Z>): Promise<GenResult<F>> {
  const t0 = performance.now();
  const { g, scaled } = startGen(options);
  const seed = options.seed ?? 1;
  const rows = {} as Record<F, number>;
  const z = start(g, options, scaled, rows);
  const files = new Map<F, FileHandle>();
  for (const t of c.tables) for (const f of c.files[t]) (files.set(f, await open(join(options.out, `${f}.tbl`), 'w')), (rows[f] = 0));
  /** Chunks done but waiting for an earlier one, so that each file is written in order. */
  const done = new Map<number, { table: T; r: TableChunkResult }>();
  let nextToWrite = 0;
  // Writes run off this thread, which meanwhile skips ahead to the next chunks.
  let writing = Promise.resolve();
  const writeReady = (): void => {
    for (let d = done.get(nextToWrite); d; d = done.get(++nextToWrite)) {
      done.delete(nextToWrite);
      c.files[d.table].forEach((f, i) => {
        const bytes = d.r.files[i]!;
        writing = writing.then(async () => void (await files.get(f)!.write(bytes)));
        rows[f] += d.r.rows[i]!;
      });
    }
  };
  const pending: Promise<void>[] = [];
  let chunkIndex = 0;
  try {
    g.skip = true;
    for (const t of c.tables) {
      const n = c.count(z, t);
      const step = options.chunkRows ?? c.chunkRows[t];
      for (let from = 0; from < n; from += step) {
        const to = Math.min(n, from + step);
        const index = chunkIndex++;
        pending.push(
          runInWorker(c.task(), { seed, sizes: z, table: t, from, to, state: g.rng.state() }).then((r) => {
            done.set(index, { table: t, r });
            writeReady();
          }),
        );
        c.rows(g, z, t, from, to, []);
        // Let the workers have their chunks while this thread skips ahead.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    await Promise.all(pending);
    await writing;
  } finally {
    g.skip = false;
    for (const f of files.values()) await f.close();
  }
  return { rows, ms: performance.now() - t0 };
}
