/**
 * Facts for tests/determinism/program.logic: a seeded random graph with labels that need CSV quoting and weights.
 * `pnpm exec tsx tests/determinism/make-facts.ts DIR [nodes edges seed]` writes them for a run on another device
 * (scripts/device/determinism.sh compares that device's output bytes with these of llvmpipe).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Writes edge.csv, label.csv and weight.csv for `n` nodes (ids -5..n-6) and `m` edges into `dir`. */
export function makeFacts(dir: string, n: number, m: number, seed: number): void {
  // mulberry32: small, seeded, the same on every platform.
  let a = seed;
  const random = (): number => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (k: number): number => Math.floor(random() * k);
  mkdirSync(dir, { recursive: true });
  const edges = Array.from({ length: m }, () => `${int(n) - 5},${int(n) - 5}`);
  writeFileSync(join(dir, 'edge.csv'), edges.join('\n') + '\n');
  const nodes = Array.from({ length: n }, (_, i) => i - 5);
  writeFileSync(join(dir, 'label.csv'), nodes.map((x) => `${x},"node ${x}, ""${String.fromCharCode(97 + int(26))}"""`).join('\n') + '\n');
  const weights = nodes.map((x) => `${x},${(random() * 2000 - 1000).toFixed(3)},${1990 + int(30)}-0${1 + int(9)}-1${int(9)},${int(100000) / 100}`);
  writeFileSync(join(dir, 'weight.csv'), weights.join('\n') + '\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dir, n = '150', m = '420', seed = '11'] = process.argv.slice(2);
  if (!dir) throw new Error('usage: make-facts.ts DIR [nodes edges seed]');
  makeFacts(dir, Number(n), Number(m), Number(seed));
}
