/** Relation names as users see them: compiler-made relations (`$delta_p`, `$functional_p`, `$t3`) stay out of sight. */
import { distance } from 'fastest-levenshtein';

/** Relations the compiler made: their names start with `$`, which no source name can. */
export function isInternalName(name: string): boolean {
  return name.startsWith('$');
}

/**
 * `; did you mean NAME?` for the candidate nearest to `word` by edit distance, when it is near enough to be a slip
 * (at most 40% of the longer name, rounded up, about what commander allows a mistyped option; never all of it, so
 * `r` is no slip of `p`), else ''. Internal names are never offered.
 */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    if (isInternalName(name) || name === word) continue;
    const d = distance(word, name);
    const longer = Math.max(word.length, name.length);
    if (d <= Math.ceil(0.4 * longer) && d < longer && (!best || d < best.d)) best = { name, d };
  }
  return best ? `; did you mean ${best.name}?` : '';
}
