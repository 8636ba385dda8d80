/**
 * Writes TPC-H `.tbl` files (see packages/bench/src/tpch/dbgen.ts for what follows the spec):
 *
 *   pnpm --silent tsx examples/tpch/dbgen.ts --sf 0.01 --out DIR [--seed 1]
 */
import { parseArgs } from 'node:util';
import { dbgen } from '@vixen/bench';

const { values } = parseArgs({ options: { sf: { type: 'string', default: '1' }, out: { type: 'string' }, seed: { type: 'string', default: '1' } } });
const sf = Number(values.sf);
const seed = Number(values.seed);
if (!values.out || !(sf > 0) || !Number.isSafeInteger(seed)) {
  process.stderr.write('usage: tsx examples/tpch/dbgen.ts --sf N --out DIR [--seed S]  (N > 0)\n');
  process.exit(2);
}
const r = dbgen({ sf, out: values.out, seed });
for (const [t, n] of Object.entries(r.rows)) process.stdout.write(`${t.padEnd(9)} ${n}\n`);
process.stdout.write(`generated in ${(r.ms / 1000).toFixed(1)} s\n`);
