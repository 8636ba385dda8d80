import { compileFile } from '@vixen/runtime';
import { printPlan, renderDiagnostics, VixenError } from '@vixen/queryplan';
const file = process.argv[2]!;
try {
  const p = compileFile(file);
  if (process.argv[3] === 'plan') console.log(printPlan(p.plan!));
  const ref = await p.interpret();
  const gpu = await p.run();
  for (const [k, rows] of ref) console.log(k, JSON.stringify(rows, (_, v) => typeof v === 'bigint' ? v.toString() + 'n' : v), JSON.stringify(rows, (_, v) => typeof v === 'bigint' ? v.toString() + 'n' : v) === JSON.stringify(gpu.relations.get(k), (_, v) => typeof v === 'bigint' ? v.toString() + 'n' : v) ? 'OK' : 'GPU MISMATCH ' + JSON.stringify(gpu.relations.get(k), (_, v) => typeof v === 'bigint' ? v.toString() + 'n' : v));
  if ((gpu as any).violations) console.log('violations', JSON.stringify((gpu as any).violations, (_, v) => typeof v === 'bigint' ? v.toString() + 'n' : v));
} catch (e) {
  if (e instanceof VixenError) console.log(renderDiagnostics(e.diagnostics, e.sources)); else throw e;
}
