// The README's library example as a runnable file: pnpm exec tsx examples/api.ts
import { compile } from '@vixen/runtime';

const program = compile(`
  edge(x, y) -> int32(x), int32(y).
  edge(1, 2). edge(2, 3).
  path(x, y) <- edge(x, y).
  path(x, z) <- path(x, y), edge(y, z).
`);
const result = await program.run();
console.log(result.adapter, result.relations.get('path'));
const oracle = await program.interpret();
console.log('reference interpreter agrees:', JSON.stringify(oracle.get('path')) === JSON.stringify(result.relations.get('path')));
