/**
 * Writes facts directories for the programs in examples/graphs.
 *
 *   pnpm exec tsx examples/graphs/make-graph.ts --kind rmat --scale 14 --edge-factor 4 --seed 1 --out DIR
 *
 * Graph kinds write DIR/edge.tsv: rmat (--scale --edge-factor [--a --b --c --d]), uniform (--nodes --edges),
 * chain/cycle (--nodes), grid (--width --height), tree (--depth), snap (--input FILE: convert a SNAP edge list).
 * Graph options: --self-loops/--duplicates keep them (rmat, uniform), --symmetric adds every edge reversed,
 * --source N also writes DIR/source.tsv (reach, sssp, bfs, widest), --weighted a third column of weights 1..64
 * (a hash of the edge's ends: sssp.logic, widest.logic).
 * Points-to kinds write their EDB relations: andersen (addressOf, assign, load, store) and cspa (assign,
 * dereference), sized by --variables.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { renderDiagnostics, VixenError } from '@vixen/queryplan';
import {
  andersenFacts,
  binaryTree,
  chain,
  cspaFacts,
  cycle,
  grid,
  loadSnapEdges,
  rmat,
  symmetric,
  uniformRandom,
  writeEdgeTsv,
  type Graph,
} from '@vixen/bench';

const OPTIONS = {
  kind: { type: 'string' },
  out: { type: 'string' },
  seed: { type: 'string', default: '1' },
  scale: { type: 'string' },
  'edge-factor': { type: 'string' },
  a: { type: 'string' },
  b: { type: 'string' },
  c: { type: 'string' },
  d: { type: 'string' },
  nodes: { type: 'string' },
  edges: { type: 'string' },
  width: { type: 'string' },
  height: { type: 'string' },
  depth: { type: 'string' },
  variables: { type: 'string' },
  input: { type: 'string' },
  source: { type: 'string' },
  'self-loops': { type: 'boolean', default: false },
  duplicates: { type: 'boolean', default: false },
  symmetric: { type: 'boolean', default: false },
  weighted: { type: 'boolean', default: false },
} as const;

const KINDS = ['rmat', 'uniform', 'chain', 'cycle', 'grid', 'tree', 'snap', 'andersen', 'cspa'];

function fail(message: string): never {
  throw new VixenError({ severity: 'error', message });
}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

function num(values: Values, name: keyof typeof OPTIONS, fallback?: number): number {
  const text = values[name];
  if (text === undefined) {
    if (fallback === undefined) fail(`--${name} is required for --kind ${values.kind}`);
    return fallback;
  }
  const v = Number(text);
  if (typeof text !== 'string' || text.trim() === '' || !Number.isFinite(v)) fail(`--${name} expects a number, got '${String(text)}'`);
  return v;
}

async function graphOf(values: Values): Promise<Graph> {
  const seed = num(values, 'seed');
  const filter = { selfLoops: values['self-loops'], duplicates: values.duplicates };
  switch (values.kind) {
    case 'rmat': {
      const probs = Object.fromEntries((['a', 'b', 'c', 'd'] as const).filter((k) => values[k] !== undefined).map((k) => [k, num(values, k)]));
      return rmat({ scale: num(values, 'scale'), edgeFactor: num(values, 'edge-factor'), seed, ...probs, ...filter });
    }
    case 'uniform':
      return uniformRandom(num(values, 'nodes'), num(values, 'edges'), { seed, ...filter });
    case 'chain':
      return chain(num(values, 'nodes'));
    case 'cycle':
      return cycle(num(values, 'nodes'));
    case 'grid':
      return grid(num(values, 'width'), num(values, 'height'));
    case 'tree':
      return binaryTree(num(values, 'depth'));
    case 'snap':
      return loadSnapEdges(values.input ?? fail('--input FILE is required for --kind snap'));
    default:
      return fail(`unknown --kind '${values.kind}' (one of ${KINDS.join(', ')})`);
  }
}

/** Runs the script on `argv` (without node and script path); returns the files written. */
export async function makeGraph(argv: string[]): Promise<string[]> {
  let values: Values;
  try {
    values = parseArgs({ args: argv, options: OPTIONS, strict: true }).values;
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e));
  }
  const out = values.out ?? fail('--out DIR is required');
  if (values.kind === undefined) fail(`--kind is required (one of ${KINDS.join(', ')})`);
  if (values.kind === 'andersen' || values.kind === 'cspa') {
    const options = { variables: num(values, 'variables'), seed: num(values, 'seed') };
    const relations: Record<string, Graph> = { ...(values.kind === 'andersen' ? andersenFacts(options) : cspaFacts(options)) };
    const files: string[] = [];
    for (const [name, g] of Object.entries(relations)) files.push(await writeEdgeTsv(out, g, name));
    return files;
  }
  let g = await graphOf(values);
  if (values.symmetric) g = symmetric(g);
  const files = [await writeEdgeTsv(out, g, 'edge', values.weighted)];
  if (values.source !== undefined) {
    const s = num(values, 'source');
    if (!Number.isInteger(s) || s < 0 || s >= g.nodes) fail(`--source must be a node id in 0..${g.nodes - 1}, got ${s}`);
    const path = join(out, 'source.tsv');
    await writeFile(path, `${s}\n`);
    files.push(path);
  }
  return files;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    for (const f of await makeGraph(process.argv.slice(2))) console.log(`wrote ${f}`);
  } catch (e) {
    if (!(e instanceof VixenError)) throw e;
    console.error(renderDiagnostics(e.diagnostics, e.sources));
    process.exitCode = 1;
  }
}
