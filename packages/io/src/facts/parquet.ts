/**
 * Parquet facts files, decoded by parquet-decode.ts: row groups on the worker pool (a few tasks per worker, so they
 * finish together), only the columns the program reads, written column-wise into row words (column-words.ts).
 */
import type { FileHandle } from 'node:fs/promises';
import type { AsyncBuffer } from 'hyparquet';
import { VixenError, type Column, type Diagnostic } from '@vixen/queryplan';
import { runInWorker, workerCount } from '../parallel/pool.js';
import { defineTask } from '../parallel/tasks.js';
import type { BinaryFactsLoader } from './column-words.js';
import { openFactsFile } from './open-file.js';
import { readExactly } from '../read-exactly.js';
import { columnTypes, stringWordOffsets } from './encoded.js';
import { addStrings, checkParquet, decodeGroups, keptBytes, openParquet, remapStringWords, type DecodedGroups, type StringRemap } from './parquet-decode.js';

/** Bytes `start..end` of an open file, as hyparquet asks for them. */
async function readRange(handle: FileHandle, start: number, end: number): Promise<ArrayBuffer> {
  const bytes = new Uint8Array(end - start);
  await readExactly(handle, bytes, start, (at) => new Error(`the file ended at byte ${at}, before byte ${end}`));
  return bytes.buffer;
}

/** An open file of `size` bytes as hyparquet reads it. */
const fileBuffer = (handle: FileHandle, size: number): AsyncBuffer => ({ byteLength: size, slice: (start, end = size) => readRange(handle, start, end) });

/** Row groups [first, end) of a Parquet file, decoded by a worker. */
interface GroupsTask {
  path: string;
  columns: readonly Column[];
  relation: string;
  kept: readonly number[];
  first: number;
  end: number;
}

/**
 * A worker's rows (string words as ids of its own distinct strings); or the diagnostics of the VixenError it met (a
 * plain object crosses threads, an error's class does not).
 */
type GroupsResult = ({ ok: true } & DecodedGroups) | { ok: false; diagnostics: Diagnostic[] };

async function decodeGroupsOfFile(task: GroupsTask): Promise<GroupsResult> {
  const { handle, size } = await openFactsFile(task.path);
  try {
    const opened = await openParquet(task.path, fileBuffer(handle, size), task.columns, task.relation, task.kept);
    return { ok: true, ...(await decodeGroups(opened, task.path, task.first, task.end)) };
  } catch (e) {
    if (e instanceof VixenError) return { ok: false, diagnostics: e.diagnostics };
    throw e;
  } finally {
    await handle.close();
  }
}

/** decodeGroupsOfFile on the worker pool. */
const decodeGroupsTask = defineTask<GroupsTask, GroupsResult>('io/parquet-groups', import.meta.url, decodeGroupsOfFile);

/** remapStringWords on the worker pool: it touches every row, where the main thread has the strings to add. */
const remapTask = defineTask<StringRemap, Uint32Array[]>('io/parquet-remap', import.meta.url, remapStringWords);

/** Files whose kept columns take fewer compressed bytes than this are decoded on the calling thread. */
const PARALLEL_BYTES = 1 << 20;

/**
 * Appends the rows of the Parquet file `path` to `target` (see `loadFactsFileInto`): row groups on the worker
 * pool, a few tasks per worker so they finish together, where the file has several and enough bytes to read; the
 * main thread adds each task's strings to the run's as the task ends, and the pool gives its rows those ids.
 */
export const loadParquetInto: BinaryFactsLoader = async (path, columns, target, strings, relation, kept, onBytes) => {
  const { handle, size } = await openFactsFile(path);
  try {
    const opened = await openParquet(path, fileBuffer(handle, size), columns, relation, kept);
    const { metadata, writer } = opened;
    checkParquet(opened, path);
    const groups = metadata.row_groups.length;
    const stringWords = stringWordOffsets(columnTypes(kept.map((c) => columns[c]!)));
    const remap = (words: Uint32Array[], ids: Uint32Array): StringRemap => ({ words, width: writer.width, stringWords, ids });
    const adopt = (words: Uint32Array[], ids: Uint32Array): void => {
      // The task's strings are noted with its first group, so the run lists them without reading the rows.
      words.forEach((w, i) => target.adopt(w, i === 0 ? ids : NONE));
    };
    if (groups < 2 || workerCount() < 2 || keptBytes(metadata, kept, 0, groups) < PARALLEL_BYTES) {
      const decoded = await decodeGroups(opened, path, 0, groups);
      const ids = addStrings(decoded.strings, strings);
      adopt(remapStringWords(remap(decoded.words, ids)), ids);
      for (const b of decoded.bytes) onBytes?.(b);
      return;
    }
    const n = Math.min(groups, 4 * workerCount());
    const results: Array<Promise<GroupsResult>> = [];
    for (let i = 0; i < n; i++) {
      const task: GroupsTask = { path, columns, relation, kept, first: Math.floor((groups * i) / n), end: Math.floor((groups * (i + 1)) / n) };
      results.push(handled(runInWorker(decodeGroupsTask, task)));
    }
    // Rows are adopted once every task has ended well: nothing is half-loaded after an error.
    const remapped: Array<Promise<{ words: Uint32Array[]; ids: Uint32Array }>> = [];
    for (const pending of results) {
      const r = await pending;
      if (!r.ok) throw new VixenError(r.diagnostics);
      const ids = addStrings(r.strings, strings);
      const words = stringWords.length === 0 ? Promise.resolve(r.words) : runInWorker(remapTask, remap(r.words, ids), r.words.map((w) => w.buffer as ArrayBuffer));
      remapped.push(handled(words.then((w) => ({ words: w, ids }))));
      for (const b of r.bytes) onBytes?.(b);
    }
    for (const pending of remapped) {
      const { words, ids } = await pending;
      adopt(words, ids);
    }
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
