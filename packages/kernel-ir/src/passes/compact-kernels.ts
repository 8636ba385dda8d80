/** Drops kernels no command launches and renumbers the rest in their order (so `kernels[i].id === i` again). */
import type { KirCommand, KirKernel, KirProgram } from '../ir.js';
import type { KirPass } from '../compile.js';

export const compactKernels = { name: 'compact-kernels', required: false, run } satisfies KirPass;

function run(p: KirProgram): KirProgram {
  const launched = new Set(p.blocks.flatMap((b) => b.commands.flatMap((c) => (c.kind === 'launch' ? [c.kernel] : []))));
  if (launched.size === p.kernels.length) return p;
  const renumber = new Map<number, number>();
  const kernels: KirKernel[] = [];
  for (const k of p.kernels) {
    if (!launched.has(k.id)) continue;
    renumber.set(k.id, kernels.length);
    kernels.push({ ...k, id: kernels.length });
  }
  const relaunch = (c: KirCommand): KirCommand => (c.kind === 'launch' ? { kind: 'launch', kernel: renumber.get(c.kernel)! } : c);
  return { ...p, kernels, blocks: p.blocks.map((b) => ({ ...b, commands: b.commands.map(relaunch) })) };
}
