/**
 * Random inputs for the points-to workloads (examples/graphs/andersen.logic and cspa.logic). Real inputs come
 * from a compiler front end; these only have the right shape, so they exercise joins and mutual recursion.
 */
import { checkInt, MAX_NODES, randomPairs, type Graph } from './graph.js';
import { Rng } from './prng.js';

export interface AndersenOptions {
  /** Pointer variables get ids 0..variables-1. */
  variables: number;
  /** Abstract objects (allocation sites) get ids variables..variables+objects-1 (default variables / 2). */
  objects?: number;
  /** Statement counts; defaults: one `p = &o` per variable, one `p = q` per variable, variables / 4 loads and stores. */
  addressOf?: number;
  assign?: number;
  load?: number;
  store?: number;
  seed?: number;
}

/** EDB relations of andersen.logic, each a set of distinct pairs over one id space. */
export interface AndersenFacts {
  addressOf: Graph;
  assign: Graph;
  load: Graph;
  store: Graph;
}

export function andersenFacts(options: AndersenOptions): AndersenFacts {
  const v = options.variables;
  checkInt('variable count', v, 1, MAX_NODES);
  const o = options.objects ?? Math.max(1, v >> 1);
  checkInt('object count', o, 1, MAX_NODES - v);
  const rng = new Rng(options.seed ?? 1);
  const nodes = v + o;
  const count = (name: string, given: number | undefined, fallback: number): number => {
    const n = given ?? fallback;
    checkInt(`${name} count`, n, 0, 2 ** 30);
    return n;
  };
  // Each relation draws from the one generator in a fixed order, so a seed fixes all four.
  return {
    addressOf: randomPairs(rng, 'addressOf', nodes, count('addressOf', options.addressOf, v), v, v, o, {}),
    assign: randomPairs(rng, 'assign', nodes, count('assign', options.assign, v), v, 0, v, {}),
    load: randomPairs(rng, 'load', nodes, count('load', options.load, v >> 2), v, 0, v, {}),
    store: randomPairs(rng, 'store', nodes, count('store', options.store, v >> 2), v, 0, v, {}),
  };
}

export interface CspaOptions {
  /** Ids 0..variables-1. */
  variables: number;
  /** `x = y` statements (default: variables). */
  assign?: number;
  /** `y = *x` statements (default: variables / 2). */
  dereference?: number;
  seed?: number;
}

/** EDB relations of cspa.logic. */
export interface CspaFacts {
  assign: Graph;
  dereference: Graph;
}

export function cspaFacts(options: CspaOptions): CspaFacts {
  const v = options.variables;
  checkInt('variable count', v, 1, MAX_NODES);
  const assign = options.assign ?? v;
  const dereference = options.dereference ?? v >> 1;
  checkInt('assign count', assign, 0, 2 ** 30);
  checkInt('dereference count', dereference, 0, 2 ** 30);
  const rng = new Rng(options.seed ?? 1);
  return {
    assign: randomPairs(rng, 'assign', v, assign, v, 0, v, {}),
    dereference: randomPairs(rng, 'dereference', v, dereference, v, 0, v, {}),
  };
}
