/**
 * A map from strings to numbers past V8's limit of 2^24 entries per Map: Maps in a chain, a new one opened when
 * the last is full. Below the limit it is one Map, so the common case pays nothing; past it a miss looks in each
 * (at most MAX_DISTINCT_STRINGS / 2^24 of them). Hashing into fixed shards would spread entries evenly only for a
 * good hash of the text, which costs a pass over every string in JS; the chain needs none.
 */
import { VixenError } from '@vixen/queryplan';

/** Most entries one V8 Map holds. */
const V8_MAP_LIMIT = 2 ** 24 - 1;

/**
 * Most distinct strings a run holds: below V8's largest array (about 2^27 elements), which holds a dictionary's
 * strings in id order.
 */
export const MAX_DISTINCT_STRINGS = 120_000_000;

/** The user error of a run whose strings pass MAX_DISTINCT_STRINGS. */
export function tooManyStrings(where: string): VixenError {
  return new VixenError({
    severity: 'error',
    message: `${where}: more than ${MAX_DISTINCT_STRINGS.toLocaleString('en-US')} distinct strings in one run, the most a string dictionary holds; read fewer string columns (a program reads only the columns its rules use)`,
  });
}

export class StringMap {
  private readonly maps: Array<Map<string, number>> = [new Map()];
  private count = 0;

  /** `shardLimit` (entries per Map) and `limit` are lower only in tests, to cross them with few strings. */
  constructor(
    private readonly where: string,
    private readonly shardLimit = V8_MAP_LIMIT,
    private readonly limit = MAX_DISTINCT_STRINGS,
  ) {}

  get size(): number {
    return this.count;
  }

  get(s: string): number | undefined {
    const maps = this.maps;
    for (let i = 0; i < maps.length; i++) {
      const v = maps[i]!.get(s);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  has(s: string): boolean {
    return this.get(s) !== undefined;
  }

  /** Adds `s`, which must be absent (get returned undefined). */
  add(s: string, v: number): void {
    if (this.count >= this.limit) throw tooManyStrings(this.where);
    let last = this.maps[this.maps.length - 1]!;
    if (last.size >= this.shardLimit) this.maps.push((last = new Map()));
    last.set(s, v);
    this.count++;
  }
}
