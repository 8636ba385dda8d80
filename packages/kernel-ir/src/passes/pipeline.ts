/** Composes IR passes left to right: `pipeline(a, b)(ir) === b(a(ir))`. */
export function pipeline<T>(...passes: ReadonlyArray<(ir: T) => T>): (ir: T) => T {
  return (ir) => passes.reduce((acc, pass) => pass(acc), ir);
}

/**
 * Repeats `pass` until it returns its argument itself (passes return the same object when they change nothing).
 * `maxRounds` bounds a pass that keeps rewriting; the last result is kept.
 */
export function fixpoint<T>(pass: (ir: T) => T, maxRounds = 100): (ir: T) => T {
  return (ir) => {
    let current = ir;
    for (let round = 0; round < maxRounds; round++) {
      const next = pass(current);
      if (next === current) break;
      current = next;
    }
    return current;
  };
}

/** `pass` when `enabled`, else the identity (e.g. an optimization switched off by an option). */
export function when<T>(enabled: boolean, pass: (ir: T) => T): (ir: T) => T {
  return enabled ? pass : (ir) => ir;
}
