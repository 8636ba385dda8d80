/**
 * Projection of parsed rows to the words a program keeps, with string words moved from a parsed part's own ids
 * to the run's: the host cache (host-cache.ts) runs it on the worker pool, one task per part, since it touches
 * every row of every table a query loads.
 */
import { defineTask } from '../parallel/tasks.js';

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
