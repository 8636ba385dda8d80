/**
 * Projection of parsed rows to the words a program keeps, with string words moved from a parsed part's own ids
 * to the run's: the host cache (host-cache.ts) and the loader of kept columns (dir.ts) run it on the worker pool,
 * one task per part, since it touches every row of every table a query loads.
 */
import { rowWords, type RelationDecl, type ScalarType } from '@vixen/queryplan';
import { runAllInWorkers } from '../parallel/pool.js';
import { defineTask } from '../parallel/tasks.js';
import { columnTypes, columnWordOffsets, type EncodedFacts } from './encoded.js';
import type { ParsedPart } from './parse-file.js';
import { stringColumnBits } from './parse-range.js';

export interface ProjectTask {
  /** Source rows back to back (shared with the main thread when a worker runs the task). */
  words: Uint32Array;
  width: number;
  /** Per output word, the source word it copies. */
  from: Int32Array;
  /** Per output word, 1 where it is a string id to map through `ids`. */
  isString: Uint8Array;
  /** The part's string id -> the run's (filled for every string a kept column holds). */
  ids: Int32Array;
}

export function projectRows({ words, width, from, isString, ids }: ProjectTask): Uint32Array {
  const outWidth = from.length;
  const out = new Uint32Array((words.length / width) * outWidth);
  // Row by row, so each source row is read once (rows are wider than the kept words).
  for (let at = 0, o = 0; at < words.length; at += width) {
    for (let k = 0; k < outWidth; k++, o++) {
      const v = words[at + from[k]!]!;
      out[o] = isString[k] === 0 ? v : ids[v]!;
    }
  }
  return out;
}

/** projectRows on the worker pool. */
export const projectTask = defineTask('io/project', import.meta.url, projectRows);

/** Parts at least this many words are projected on the worker pool (when their words are shared). */
const WORKER_WORDS = 1 << 16;

/**
 * Appends the `kept` columns (indices into `source`, the parts' column types) of parsed `parts` to `decl`'s relation
 * in `facts`: the strings the kept columns hold get the run's ids here, and the rows are projected on the worker pool.
 */
export async function projectParts(parts: readonly ParsedPart[], source: readonly ScalarType[], kept: readonly number[], decl: RelationDecl, facts: EncodedFacts): Promise<void> {
  const width = rowWords(source);
  const offsets = columnWordOffsets(source);
  const bits = stringColumnBits(source);
  // Per word of an output row: the source word it copies, and whether it is a string id to map.
  const fromList: number[] = [];
  const stringList: number[] = [];
  let keptBits = 0;
  for (const c of kept) {
    keptBits |= bits[c]!;
    for (let w = 0; w < rowWords([source[c]!]); w++) {
      fromList.push(offsets[c]! + w);
      stringList.push(source[c] === 'string' ? 1 : 0);
    }
  }
  const from = Int32Array.from(fromList);
  const isString = Uint8Array.from(stringList);
  const target = facts.relation(decl.name, columnTypes(decl.columns));
  const tasks: ProjectTask[] = [];
  const runIds: Uint32Array[] = [];
  for (const part of parts) {
    // Shared, so worker tasks read it in place.
    const ids = new Int32Array(new SharedArrayBuffer(keptBits === 0 ? 0 : part.stringCount * 4));
    const used: number[] = [];
    if (keptBits !== 0) {
      for (let s = 0; s < part.stringCount; s++) {
        if ((part.columns[s]! & keptBits) === 0) continue;
        const id = facts.strings.add(part.strings.text(s));
        ids[s] = id;
        used.push(id);
      }
    }
    // The part's strings are noted with its first piece.
    part.pieces.forEach((words, i) => {
      tasks.push({ words, width, from, isString, ids });
      runIds.push(Uint32Array.from(i === 0 ? used : []));
    });
  }
  const onWorker = (t: ProjectTask): boolean => t.words.buffer instanceof SharedArrayBuffer && t.words.length >= WORKER_WORDS;
  const projected = await runAllInWorkers(projectTask, tasks.filter(onWorker));
  let next = 0;
  tasks.forEach((t, i) => target.adopt(onWorker(t) ? projected[next++]! : projectRows(t), runIds[i]!));
}
