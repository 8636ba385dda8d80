/**
 * Parquet facts files, decoded by parquet-decode.ts: row groups on the worker pool (a few tasks per worker, so they
 * finish together; a file of few groups splits their columns among tasks too), only the columns the program reads,
 * written column-wise into row words (column-words.ts).
 */
import { isAscii } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';
import type { FileMetaData } from 'hyparquet';
import { VixenError, rowWords, type Column, type Diagnostic } from '@vixen/queryplan';
import { runInWorker, workerCount } from '../parallel/pool.js';
import { defineTask } from '../parallel/tasks.js';
import type { BinaryFactsLoader } from './column-words.js';
import { openFactsFile } from './open-file.js';
import { readExactly, readExactlySync } from '../read-exactly.js';
import { columnTypes, columnWordOffsets, type StringInterner } from './encoded.js';
import { concatWords } from '../words.js';
import { addStrings, checkParquet, decodeGroups, keptBytes, openParquet, rowsBefore, type DecodedGroups, type ParquetFile } from './parquet-decode.js';
import type { InternedStrings } from './byte-strings.js';
import { asciiList, ByteStringSort, warmByteSortWorkers, type ByteSorter } from '../sort-byte-strings.js';

/**
 * An open file of `size` bytes as hyparquet reads it: read asynchronously, or on this thread where `sync` (a
 * worker's task: readExactlySync).
 */
function fileBuffer(handle: FileHandle, size: number, sync = false): ParquetFile {
  const ended = (end: number) => (at: number): Error => new Error(`the file ended at byte ${at}, before byte ${end}`);
  const slice = (start: number, end = size): ArrayBuffer | Promise<ArrayBuffer> => {
    const bytes = new Uint8Array(end - start);
    if (sync) {
      readExactlySync(handle, bytes, start, ended(end));
      return bytes.buffer;
    }
    return readExactly(handle, bytes, start, ended(end)).then(() => bytes.buffer);
  };
  const readInto = (bytes: Uint8Array, start: number): Uint8Array => {
    readExactlySync(handle, bytes, start, ended(start + bytes.length));
    return bytes;
  };
  return sync ? { byteLength: size, slice, readInto } : { byteLength: size, slice };
}

/**
 * Row groups of a Parquet file, decoded by a worker: `metadata` holds the file's, but of its row groups only those
 * (the caller parsed the footer once, not each task), the first starting at file row `firstRow`.
 */
interface GroupsTask {
  path: string;
  columns: readonly Column[];
  relation: string;
  kept: readonly number[];
  metadata: FileMetaData;
  firstRow: number;
}

/**
 * A worker's rows (string words as ids of its own distinct strings, `ascii` where all of those are ASCII); or the
 * diagnostics of the VixenError it met (a plain object crosses threads, an error's class does not).
 */
type GroupsResult = ({ ok: true; ascii: boolean; ms: number } & DecodedGroups) | { ok: false; diagnostics: Diagnostic[] };

async function decodeGroupsOfFile(task: GroupsTask): Promise<GroupsResult> {
  const t0 = performance.now();
  const { handle, size } = await openFactsFile(task.path);
  try {
    const opened = await openParquet(task.path, fileBuffer(handle, size, true), task.columns, task.relation, task.kept, task.metadata);
    const decoded = await decodeGroups(opened, task.path, 0, task.metadata.row_groups.length, task.firstRow);
    return { ok: true, ascii: isAscii(decoded.strings.bytes), ms: performance.now() - t0, ...decoded };
  } catch (e) {
    if (e instanceof VixenError) return { ok: false, diagnostics: e.diagnostics };
    throw e;
  } finally {
    await handle.close();
  }
}

/** decodeGroupsOfFile on the worker pool. */
const decodeGroupsTask = defineTask<GroupsTask, GroupsResult>('io/parquet-groups', import.meta.url, decodeGroupsOfFile);

/**
 * Time of the Parquet loads so far, in ms (`vixen bench load` prints them per load): files read, tasks on the worker
 * pool, their time there (summed, and the longest of each file's, summed), the calling thread's wait for them,
 * adding each decode's strings to the sort, the sort, and the whole of loadParquetInto.
 */
export const parquetLoadTimes = { files: 0, tasks: 0, taskMs: 0, longestTaskMs: 0, waitMs: 0, stringsMs: 0, sortMs: 0, ms: 0 };

/** Files whose kept columns take fewer compressed bytes than this are decoded on the calling thread. */
const PARALLEL_BYTES = 1 << 20;

/**
 * Per decode, the run's ids of its distinct strings. Where all are ASCII, each decode's strings are added to one sort
 * (the run's: StringInterner.sortBytes, the device's where it has one; else ByteStringSort on the worker pool) as the
 * decode arrives, so the sort copies a task's strings while later ones still decode; the sorted, distinct list is one
 * the run's dictionary merges without decoding it (StringInterner.addSorted): millions of names and comments never
 * become JS strings, unless the run shows them. Otherwise each is decoded and added (addStrings).
 */
class TaskStrings {
  private readonly sort: ByteSorter;
  private readonly tables: InternedStrings[] = [];
  private bytes = 0;
  /** Whether every decode's strings are ASCII, and fewer than 2^32 bytes in all: sorted as bytes. */
  private ascii = true;

  constructor(private readonly strings: StringInterner) {
    this.sort = strings.sortBytes?.() ?? new ByteStringSort();
  }

  add(table: InternedStrings, ascii: boolean): void {
    this.tables.push(table);
    this.bytes += table.bytes.length;
    this.ascii &&= ascii && this.bytes < 2 ** 32;
    if (!this.ascii) return;
    const starts = new Uint32Array(table.ends.length + 1);
    starts.set(table.ends, 1);
    this.sort.add(table.bytes, starts);
  }

  /** Gives back what the sort holds (a decode failed). */
  abandon(): Promise<void> {
    return this.sort.abandon();
  }

  /** Per decode added, its strings' ids. */
  async ids(): Promise<Uint32Array[]> {
    if (!this.ascii || this.tables.every((t) => t.ends.length === 0)) {
      await this.sort.abandon();
      return this.tables.map((t) => addStrings(t, this.strings));
    }
    const { sorted, ranks } = await this.sort.finish();
    const first = this.strings.addSorted(asciiList(sorted));
    for (const r of ranks) for (let i = 0; i < r.length; i++) r[i]! += first;
    return ranks;
  }
}

/**
 * Appends the rows of the Parquet file `path` to `target` (see `loadFactsFileInto`): runs of row groups on the
 * worker pool, a few tasks per worker so they finish together (each run's columns split among tasks where the file
 * has few groups), where it has enough bytes to read; then every task's strings get the run's ids together
 * (TaskStrings), which the rows take with the run's dictionary.
 */
export const loadParquetInto: BinaryFactsLoader = async (path, columns, target, strings, relation, kept, onBytes) => {
  const times = parquetLoadTimes;
  const t0 = performance.now();
  times.files++;
  // The pool's threads start loading with a run's first file, often a small one decoded here, rather than with the
  // first large one, whose tasks would wait for them.
  warmByteSortWorkers();
  const { handle, size } = await openFactsFile(path);
  try {
    const opened = await openParquet(path, fileBuffer(handle, size), columns, relation, kept);
    const { metadata } = opened;
    checkParquet(opened, path);
    const groups = metadata.row_groups.length;
    /** Per run of row groups, its rows, and the indices of the string tables (added to `ids`) its string words index, in turn. */
    const decoded: Array<{ words: Uint32Array[]; tables: number[] }> = [];
    const workers = workerCount();
    const parallel = workers >= 2 && (groups >= 2 || kept.length >= 2) && keptBytes(metadata, kept, 0, groups) >= PARALLEL_BYTES;
    // Runs of row groups, a few per worker; where a file has fewer groups than that, each run's columns are split
    // among several tasks too (a TPC-H SF 3 customer file's 4 groups kept 4 of 16 workers busy).
    const runs = parallel ? Math.min(groups, 4 * workers) : 1;
    const sets = parallel ? columnSets(metadata, kept, Math.ceil((2 * workers) / runs)) : [kept.map((_, k) => k)];
    const ids = new TaskStrings(strings);
    let tables = 0;
    try {
      if (!parallel) {
        const d = await decodeGroups(opened, path, 0, groups);
        decoded.push({ words: d.words, tables: [tables++] });
        const t1 = performance.now();
        ids.add(d.strings, isAscii(d.strings.bytes));
        times.stringsMs += performance.now() - t1;
        for (const b of d.bytes) onBytes?.(b);
      } else {
        const results: Array<Array<Promise<GroupsResult>>> = [];
        for (let i = 0; i < runs; i++) {
          const [first, end] = [Math.floor((groups * i) / runs), Math.floor((groups * (i + 1)) / runs)];
          const groupsOfRun = { ...metadata, row_groups: metadata.row_groups.slice(first, end) };
          const task = (set: readonly number[]): GroupsTask => ({ path, columns, relation, kept: set.map((k) => kept[k]!), metadata: groupsOfRun, firstRow: rowsBefore(metadata, first) });
          results.push(sets.map((set) => handled(runInWorker(decodeGroupsTask, task(set)))));
        }
        times.tasks += runs * sets.length;
        let longest = 0;
        for (const run of results) {
          const parts: DecodedGroups[] = [];
          for (const pending of run) {
            const t1 = performance.now();
            const r = await pending;
            const t2 = performance.now();
            times.waitMs += t2 - t1;
            if (!r.ok) throw new VixenError(r.diagnostics);
            parts.push(r);
            ids.add(r.strings, r.ascii);
            times.stringsMs += performance.now() - t2;
            times.taskMs += r.ms;
            longest = Math.max(longest, r.ms);
          }
          decoded.push({ words: parts.length === 1 ? parts[0]!.words : joinColumns(parts, sets, opened.writer.columns, kept), tables: parts.map(() => tables++) });
          parts[0]!.bytes.forEach((_, g) => onBytes?.(parts.reduce((n, p) => n + p.bytes[g]!, 0)));
        }
        times.longestTaskMs += longest;
      }
    } catch (e) {
      await ids.abandon();
      throw e;
    }
    // Rows are adopted once every task has ended well: nothing is half-loaded after an error.
    const t1 = performance.now();
    const tableIds = await ids.ids();
    times.sortMs += performance.now() - t1;
    for (const d of decoded) {
      const runIds = d.tables.length === 1 ? tableIds[d.tables[0]!]! : concatWords(d.tables.map((t) => tableIds[t]!));
      // The run's strings are noted with its first group, so the run lists them without reading the rows; the rows
      // get their ids when the run's dictionary is known, in the same pass as the dictionary's (EncodedRelation.adopt).
      d.words.forEach((w, k) => target.adopt(w, k === 0 ? runIds : NONE, runIds));
    }
  } finally {
    await handle.close();
    times.ms += performance.now() - t0;
  }
};

/**
 * The kept columns (indices into `kept`) split into at most `count` sets of about equal compressed bytes, each
 * ascending: the columns one task of a run of row groups decodes.
 */
function columnSets(metadata: FileMetaData, kept: readonly number[], count: number): number[][] {
  const sets: Array<{ ks: number[]; bytes: number }> = Array.from({ length: Math.min(count, kept.length) }, () => ({ ks: [], bytes: 0 }));
  const bytes = kept.map((c) => keptBytes(metadata, [c], 0, metadata.row_groups.length));
  // The largest first, each to the set with the fewest bytes so far.
  for (const k of kept.map((_, k) => k).sort((a, b) => bytes[b]! - bytes[a]!)) {
    const set = sets.reduce((a, b) => (b.bytes < a.bytes ? b : a));
    set.ks.push(k);
    set.bytes += bytes[k]!;
  }
  return sets.map((s) => s.ks.sort((a, b) => a - b));
}

/**
 * The rows of a run of row groups whose kept columns' `sets` were decoded apart (`parts`, each with its own rows and
 * strings): each group's rows with every kept column, the string words of each part after the first moved past the
 * strings of the parts before it (the run's string ids are the parts' lists joined in turn).
 */
function joinColumns(parts: readonly DecodedGroups[], sets: readonly number[][], columns: readonly Column[], kept: readonly number[]): Uint32Array[] {
  const types = columnTypes(kept.map((c) => columns[c]!));
  const offsets = columnWordOffsets(types);
  const width = rowWords(types);
  return parts[0]!.words.map((_, g) => {
    const rows = parts[0]!.words[g]!.length / rowWords(sets[0]!.map((k) => types[k]!));
    const words = new Uint32Array(rows * width);
    let base = 0;
    parts.forEach((part, p) => {
      const partTypes = sets[p]!.map((k) => types[k]!);
      const partOffsets = columnWordOffsets(partTypes);
      const partWidth = rowWords(partTypes);
      const from = part.words[g]!;
      sets[p]!.forEach((k, j) => {
        const add = types[k] === 'string' ? base : 0;
        for (let w = 0; w < rowWords([types[k]!]); w++) {
          for (let r = 0, at = partOffsets[j]! + w, to = offsets[k]! + w; r < rows; r++, at += partWidth, to += width) words[to] = from[at]! + add;
        }
      });
      base += part.strings.ends.length;
    });
    return words;
  });
}

const NONE = new Uint32Array(0);

/** `p`, marked handled: promises awaited in turn must not go unhandled while an earlier one is awaited, or failed. */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}
