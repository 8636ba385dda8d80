/**
 * Parquet facts files, decoded by parquet-decode.ts: row groups on the worker pool (a few tasks per worker, so they
 * finish together), only the columns the program reads, written column-wise into row words (column-words.ts).
 */
import { isAscii } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';
import type { AsyncBuffer, FileMetaData } from 'hyparquet';
import { VixenError, type Column, type Diagnostic } from '@vixen/queryplan';
import { runInWorker, workerCount } from '../parallel/pool.js';
import { defineTask } from '../parallel/tasks.js';
import type { BinaryFactsLoader } from './column-words.js';
import { openFactsFile } from './open-file.js';
import { readExactly, readExactlySync } from '../read-exactly.js';
import type { StringInterner } from './encoded.js';
import { addStrings, checkParquet, decodeGroups, keptBytes, openParquet, rowsBefore, type DecodedGroups } from './parquet-decode.js';
import type { InternedStrings } from './byte-strings.js';
import { asciiList, sortByteStrings } from '../sort-byte-strings.js';

/**
 * An open file of `size` bytes as hyparquet reads it: read asynchronously, or on this thread where `sync` (a
 * worker's task: readExactlySync).
 */
function fileBuffer(handle: FileHandle, size: number, sync = false): AsyncBuffer {
  const slice = (start: number, end = size): ArrayBuffer | Promise<ArrayBuffer> => {
    const bytes = new Uint8Array(end - start);
    const ended = (at: number): Error => new Error(`the file ended at byte ${at}, before byte ${end}`);
    if (sync) {
      readExactlySync(handle, bytes, start, ended);
      return bytes.buffer;
    }
    return readExactly(handle, bytes, start, ended).then(() => bytes.buffer);
  };
  return { byteLength: size, slice };
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
type GroupsResult = ({ ok: true; ascii: boolean } & DecodedGroups) | { ok: false; diagnostics: Diagnostic[] };

async function decodeGroupsOfFile(task: GroupsTask): Promise<GroupsResult> {
  const { handle, size } = await openFactsFile(task.path);
  try {
    const opened = await openParquet(task.path, fileBuffer(handle, size, true), task.columns, task.relation, task.kept, task.metadata);
    const decoded = await decodeGroups(opened, task.path, 0, task.metadata.row_groups.length, task.firstRow);
    return { ok: true, ascii: isAscii(decoded.strings.bytes), ...decoded };
  } catch (e) {
    if (e instanceof VixenError) return { ok: false, diagnostics: e.diagnostics };
    throw e;
  } finally {
    await handle.close();
  }
}

/** decodeGroupsOfFile on the worker pool. */
const decodeGroupsTask = defineTask<GroupsTask, GroupsResult>('io/parquet-groups', import.meta.url, decodeGroupsOfFile);

/** Files whose kept columns take fewer compressed bytes than this are decoded on the calling thread. */
const PARALLEL_BYTES = 1 << 20;

/**
 * The decodes' distinct strings back to back, in shared memory (for sortByteStrings' workers), copied as each decode
 * arrives: the calling thread copies a task's while later ones still decode. Room for `parts` decodes like the first
 * (tasks of a file are alike), grown if short.
 */
class JoinedStrings {
  private bytes: Uint8Array = new Uint8Array(new SharedArrayBuffer(0));
  private used = 0;
  private ends = new Uint32Array(1 << 10);
  private count = 0;
  /** Whether every decode's strings are ASCII (those that are not are not kept: addStrings decodes them). */
  ascii = true;

  constructor(private readonly parts: number) {}

  add(table: InternedStrings, ascii: boolean): void {
    this.ascii &&= ascii;
    if (!this.ascii || this.used + table.bytes.length >= 2 ** 32) return void (this.ascii = false);
    if (this.used + table.bytes.length > this.bytes.length) {
      const room = this.used === 0 ? Math.ceil(1.25 * this.parts * table.bytes.length) : 2 * this.bytes.length;
      const bigger = new Uint8Array(new SharedArrayBuffer(Math.min(2 ** 32 - 1, Math.max(this.used + table.bytes.length, room))));
      bigger.set(this.bytes.subarray(0, this.used));
      this.bytes = bigger;
    }
    this.bytes.set(table.bytes, this.used);
    if (this.count + table.ends.length > this.ends.length) {
      const bigger = new Uint32Array(Math.max(this.count + table.ends.length, 2 * this.ends.length));
      bigger.set(this.ends.subarray(0, this.count));
      this.ends = bigger;
    }
    for (let i = 0; i < table.ends.length; i++) this.ends[this.count++] = this.used + table.ends[i]!;
    this.used += table.bytes.length;
  }

  /** The strings as sortByteStrings takes them (string i is bytes [starts[i], starts[i + 1])). */
  shared(): { bytes: Uint8Array; starts: Uint32Array; count: number } {
    const starts = new Uint32Array(new SharedArrayBuffer(4 * (this.count + 1)));
    starts.set(this.ends.subarray(0, this.count), 1);
    return { bytes: this.bytes.subarray(0, this.used), starts, count: this.count };
  }
}

/**
 * Per decode, the run's ids of its distinct strings (`tables`, also `joined`). Where all are ASCII, their bytes are
 * sorted and deduplicated together on the worker pool into one list that the run's dictionary merges without
 * decoding it (StringInterner.addSorted): millions of names and comments never become JS strings, unless the run
 * shows them. Otherwise each is decoded and added (addStrings).
 */
async function runStringIds(tables: readonly InternedStrings[], joined: JoinedStrings, strings: StringInterner): Promise<Uint32Array[]> {
  const { bytes, starts, count } = joined.shared();
  if (count === 0 || !joined.ascii) return tables.map((t) => addStrings(t, strings));
  const { sorted, rank } = await sortByteStrings(bytes, starts);
  const first = strings.addSorted(asciiList(sorted));
  let from = 0;
  return tables.map((t) => {
    const ids = rank.slice(from, (from += t.ends.length));
    for (let i = 0; i < ids.length; i++) ids[i]! += first;
    return ids;
  });
}

/**
 * Appends the rows of the Parquet file `path` to `target` (see `loadFactsFileInto`): row groups on the worker
 * pool, a few tasks per worker so they finish together, where the file has several and enough bytes to read; then
 * every task's strings get the run's ids together (runStringIds), which the rows take with the run's dictionary.
 */
export const loadParquetInto: BinaryFactsLoader = async (path, columns, target, strings, relation, kept, onBytes) => {
  const { handle, size } = await openFactsFile(path);
  try {
    const opened = await openParquet(path, fileBuffer(handle, size), columns, relation, kept);
    const { metadata } = opened;
    checkParquet(opened, path);
    const groups = metadata.row_groups.length;
    const decoded: DecodedGroups[] = [];
    const parallel = groups >= 2 && workerCount() >= 2 && keptBytes(metadata, kept, 0, groups) >= PARALLEL_BYTES;
    const tasks = parallel ? Math.min(groups, 4 * workerCount()) : 1;
    const joined = new JoinedStrings(tasks);
    if (!parallel) {
      const d = await decodeGroups(opened, path, 0, groups);
      decoded.push(d);
      joined.add(d.strings, isAscii(d.strings.bytes));
      for (const b of d.bytes) onBytes?.(b);
    } else {
      const results: Array<Promise<GroupsResult>> = [];
      for (let i = 0; i < tasks; i++) {
        const [first, end] = [Math.floor((groups * i) / tasks), Math.floor((groups * (i + 1)) / tasks)];
        const task: GroupsTask = { path, columns, relation, kept, metadata: { ...metadata, row_groups: metadata.row_groups.slice(first, end) }, firstRow: rowsBefore(metadata, first) };
        results.push(handled(runInWorker(decodeGroupsTask, task)));
      }
      for (const pending of results) {
        const r = await pending;
        if (!r.ok) throw new VixenError(r.diagnostics);
        decoded.push(r);
        joined.add(r.strings, r.ascii);
        for (const b of r.bytes) onBytes?.(b);
      }
    }
    // Rows are adopted once every task has ended well: nothing is half-loaded after an error.
    const ids = await runStringIds(decoded.map((d) => d.strings), joined, strings);
    decoded.forEach((d, i) => {
      // The task's strings are noted with its first group, so the run lists them without reading the rows; the rows
      // get their ids when the run's dictionary is known, in the same pass as the dictionary's (EncodedRelation.adopt).
      d.words.forEach((w, k) => target.adopt(w, k === 0 ? ids[i] : NONE, ids[i]));
    });
  } finally {
    await handle.close();
  }
};

const NONE = new Uint32Array(0);

/** `p`, marked handled: promises awaited in turn must not go unhandled while an earlier one is awaited, or failed. */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}
