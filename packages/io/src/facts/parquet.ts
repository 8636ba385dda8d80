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
import type { ByteStrings } from './byte-strings.js';
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
 * Per decode, the run's ids of its distinct strings (`tables`). Where all are ASCII, their bytes are sorted and
 * deduplicated together on the worker pool into one list that the run's dictionary merges without decoding it
 * (StringInterner.addSorted): millions of names and comments never become JS strings, unless the run shows them.
 * Otherwise each is decoded and added (addStrings).
 */
async function runStringIds(tables: ReadonlyArray<ByteStrings & { ascii: boolean }>, strings: StringInterner): Promise<Uint32Array[]> {
  const count = tables.reduce((n, t) => n + t.ends.length, 0);
  const byteCount = tables.reduce((n, t) => n + t.bytes.length, 0);
  if (count === 0 || !tables.every((t) => t.ascii) || byteCount >= 2 ** 32) return tables.map((t) => addStrings(t, strings));
  // Shared, so the sorting workers read them where they are.
  const bytes = new Uint8Array(new SharedArrayBuffer(byteCount));
  const starts = new Uint32Array(new SharedArrayBuffer(4 * (count + 1)));
  let at = 0;
  let s = 0;
  for (const t of tables) {
    bytes.set(t.bytes, at);
    for (let i = 0; i < t.ends.length; i++) starts[++s] = at + t.ends[i]!;
    at += t.bytes.length;
  }
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
    const decoded: Array<DecodedGroups & { ascii: boolean }> = [];
    if (groups < 2 || workerCount() < 2 || keptBytes(metadata, kept, 0, groups) < PARALLEL_BYTES) {
      const d = await decodeGroups(opened, path, 0, groups);
      decoded.push({ ...d, ascii: isAscii(d.strings.bytes) });
      for (const b of d.bytes) onBytes?.(b);
    } else {
      const n = Math.min(groups, 4 * workerCount());
      const results: Array<Promise<GroupsResult>> = [];
      for (let i = 0; i < n; i++) {
        const [first, end] = [Math.floor((groups * i) / n), Math.floor((groups * (i + 1)) / n)];
        const task: GroupsTask = { path, columns, relation, kept, metadata: { ...metadata, row_groups: metadata.row_groups.slice(first, end) }, firstRow: rowsBefore(metadata, first) };
        results.push(handled(runInWorker(decodeGroupsTask, task)));
      }
      for (const pending of results) {
        const r = await pending;
        if (!r.ok) throw new VixenError(r.diagnostics);
        decoded.push(r);
        for (const b of r.bytes) onBytes?.(b);
      }
    }
    // Rows are adopted once every task has ended well: nothing is half-loaded after an error.
    const ids = await runStringIds(decoded.map((d) => ({ ...d.strings, ascii: d.ascii })), strings);
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
