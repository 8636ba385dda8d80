/** Composes IR passes left to right: `pipeline(a, b)(ir) === b(a(ir))`. */
export function pipeline<T>(...passes: ReadonlyArray<(ir: T) => T>): (ir: T) => T {
  return (ir) => passes.reduce((acc, pass) => pass(acc), ir);
}
