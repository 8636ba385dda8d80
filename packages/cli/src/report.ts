/**
 * Text for run statistics, profiles, `vixen explain` (text and DOT), the fixpoint progress line and the pass list
 * of `vixen plan --passes`. The runtime returns the numbers (ExecuteStats); this module only formats them.
 */
import { cfgToDot, kirDotCfg, printKir, terminatorEdges, type DotCfg } from '@vixen/kernel-ir';
import { printCommand, printOrigin, printPlan, printTerminator, type PassEntry, type QpProgram } from '@vixen/queryplan';
import { formatBytes, formatWork, type ExecuteStats, type FixpointProgress, type LoopStats, type Program } from '@vixen/runtime';

const ms = (x: number): string => x.toFixed(2);

/** Columns of text, numbers right-aligned. */
function table(header: string[], rows: string[][], numeric: boolean[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].map((l) => `  ${l}`);
}

/** `vixen plan --passes`: every pass in the order it runs, whether it may be disabled, and where it runs. */
export function formatPasses(passes: readonly PassEntry[]): string {
  const rows = passes.map((p) => [p.stage, p.name, p.required ? 'required' : 'optional', p.within.join(', ')]);
  return table(['stage', 'pass', 'kind', 'runs within'], rows, [false, false, false, false]).join('\n') + '\n';
}

/**
 * A loop's iterations (those run inside the small-loop kernel among them), batches, host syncs and dispatches per
 * iteration, for --stats and the profile.
 */
function loopSummary(l: LoopStats): string {
  const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
  const perIteration = l.iterations > 0 ? (l.dispatches / l.iterations).toFixed(1) : '0';
  const inKernel = l.inKernel > 0 ? ` (${l.inKernel} in-kernel)` : '';
  return `${count(l.iterations, 'iteration', 'iterations')}${inKernel} in ${count(l.batches, 'batch', 'batches')}, ${count(l.hostSyncs, 'host sync', 'host syncs')}, ${perIteration} dispatches per iteration`;
}

/** The one-paragraph summary `--stats` prints; `hostLoadMs`, when known, the facts read before the run. */
export function formatStats(s: ExecuteStats, hostLoadMs?: number): string {
  const lines = [
    ...(hostLoadMs !== undefined ? [`facts read on the host: ${hostLoadMs.toFixed(1)} ms (files or store, before the run)`] : []),
    `kernels launched: ${s.launches}, blocks executed: ${s.blockSteps}, time: ${s.milliseconds.toFixed(1)} ms ` +
      `(load ${s.loadMilliseconds.toFixed(1)} ms, evaluation ${(s.milliseconds - s.loadMilliseconds - s.readbackMilliseconds).toFixed(1)} ms, ` +
      `readback ${s.readbackMilliseconds.toFixed(1)} ms, with the wait for the last kernels; ${s.waitMilliseconds.toFixed(1)} ms of it all waiting for the device)`,
    `peak device memory: ${formatBytes(s.peakDeviceBytes)}${s.deviceMemoryBudget !== undefined ? ` of a ${formatBytes(s.deviceMemoryBudget)} budget` : ''} ` +
      `(${formatBytes(s.peakStorageBytes)} with kernels' scratch, ${formatBytes(s.peakAllocatedBytes)} of device buffers in all), ` +
      `host syncs: ${s.hostSyncs}, buffers created: ${s.buffersCreated}, read back: ${formatBytes(s.readbackBytes)}`,
    ...(s.spills > 0
      ? [`spilled to host memory: ${formatBytes(s.spilledBytes)} in ${s.spills} spill${s.spills === 1 ? '' : 's'}, uploaded again: ${formatBytes(s.reloadedBytes)}`]
      : []),
    ...(s.partitionedLaunches > 0
      ? [
          `run in partitions (their relations past the budget together): ${s.partitionedLaunches} kernel launch${s.partitionedLaunches === 1 ? '' : 'es'}, ${s.partitions} partition step${s.partitions === 1 ? '' : 's'} uploading ${formatBytes(s.partitionUploadBytes)}: ` +
            s.partitionedKinds.map((k) => `${k.kind} ${k.launches}/${k.steps}${k.onHost > 0 ? ` (${k.onHost} on the host)` : ''}`).join(', ') +
            ' (launches/steps)',
        ]
      : []),
    ...s.loops.map((l) => `fixpoint loop ${l.block} (${l.relations.join(', ')}): ${loopSummary(l)}`),
    `device work outside compute passes: ${formatWork(s)}`,
    ...(s.startedAgain ? ['started again without guesses: a kernel guessed from its last run, and the guess failed'] : []),
    ...(s.replayed ? [`replayed the device work recorded from an earlier run of the program: ${s.dispatches} dispatches in ${s.submissions} submission${s.submissions === 1 ? '' : 's'}, no kernel planned`] : []),
  ];
  return lines.join('\n') + '\n';
}

/** QP command text for an operator, or its kernels when the program carries no plan. */
function operatorText(plan: QpProgram | undefined, block: string, command: number, kernels: readonly number[]): string {
  const c = plan?.blocks.find((b) => b.label === block)?.commands[command];
  return c ? printCommand(c) : `kernels ${kernels.map((k) => `k${k}`).join(', ')}`;
}

/** Per-operator and per-kernel tables: launches, time, rows and bytes in and out. */
export function formatProfile(s: ExecuteStats, plan: QpProgram | undefined): string {
  const timing = s.timestamps
    ? 'device times: GPU timestamp queries around every compute pass'
    : s.profiled
      ? 'device times: the run waited for the device after every kernel'
      : 'host times (no device wait)';
  const traffic = (t: { rowsIn: number; rowsOut: number; bytesIn: number; bytesOut: number }): string[] =>
    [t.rowsIn, t.rowsOut, t.bytesIn, t.bytesOut].map(String);
  const ops = table(
    ['block', 'cmd', 'runs', 'time ms', 'rows in', 'rows out', 'bytes in', 'bytes out', 'operator'],
    s.operators.map((o) => [
      o.block,
      String(o.command),
      String(o.launches),
      ms(o.milliseconds),
      ...traffic(o),
      operatorText(plan, o.block, o.command, o.kernels),
    ]),
    [false, true, true, true, true, true, true, true, false],
  );
  const kernels = table(
    ['kernel', 'kind', 'from', 'launches', 'time ms', 'wall ms', 'rows in', 'rows out', 'bytes in', 'bytes out', 'copied MiB', 'cleared MiB', 'created MiB', 'readbacks', 'rules'],
    s.kernels.map((k) => [
      `k${k.kernel}`,
      k.kind,
      k.origin ? `${k.origin.block}#${k.origin.command}` : '-',
      String(k.launches),
      ms(k.milliseconds),
      ms(k.wallMilliseconds),
      ...traffic(k),
      ...[k.work.copyBytes, k.work.clearBytes, k.work.createdBytes].map((b) => (b / 2 ** 20).toFixed(1)),
      String(k.work.readbacks),
      // Where only: the kernel IR (`plan --ir kernel`) prints the rules' text.
      (k.rules ?? []).map((r) => printOrigin({ ...r, text: '' })).join(', ') || '-',
    ]),
    [false, false, false, true, true, true, true, true, true, true, true, true, true, true, false],
  );
  const total = s.kernels.reduce((n, k) => n + k.milliseconds, 0);
  return [
    `profile (${timing}; kernels total ${ms(total)} ms of ${ms(s.milliseconds)} ms)`,
    ...(s.operators.length > 0 ? ['QP operators:', ...ops] : []),
    'kernels:',
    ...kernels,
    ...s.loops.map((l) => `fixpoint loop ${l.block} (${l.relations.join(', ')}): ${loopSummary(l)}`),
  ].join('\n') + '\n';
}

/** `vixen explain` as text: the plan (when the program has one), the kernel IR, then the profile if there is one. */
export function explainText(prog: Program, stats: ExecuteStats | undefined): string {
  const parts = [
    ...(prog.plan ? ['query plan:', printPlan(prog.plan).trimEnd(), ''] : []),
    'kernel IR:',
    printKir(prog.kir).trimEnd(),
    ...(stats ? ['', formatProfile(stats, prog.plan).trimEnd()] : []),
  ];
  return parts.join('\n') + '\n';
}

const flow = (t: { rowsIn: number; rowsOut: number; launches: number; milliseconds: number }, what: 'run' | 'launch'): string =>
  `${t.launches} ${what}${t.launches === 1 ? '' : what === 'run' ? 's' : 'es'}, ${ms(t.milliseconds)} ms, rows ${t.rowsIn} -> ${t.rowsOut}`;

function planDotCfg(plan: QpProgram, stats: ExecuteStats | undefined): DotCfg {
  const runs = new Map(stats?.blocks.map((b) => [b.label, b.executions]));
  const ops = new Map(stats?.operators.map((o) => [`${o.command}@${o.block}`, o]));
  return {
    title: 'query plan',
    entry: plan.entry,
    blocks: plan.blocks.map((b) => {
      const t = b.terminator;
      const note = runs.get(b.label);
      return {
        label: b.label,
        lines: [...b.commands.map(printCommand), printTerminator(t)],
        lineNotes: b.commands.map((_, i) => {
          const o = ops.get(`${i}@${b.label}`);
          return o ? flow(o, 'run') : undefined;
        }),
        ...(note !== undefined ? { note: `ran ${note}x` } : {}),
        successors: terminatorEdges(t),
      };
    }),
  };
}

/** `vixen explain --dot`: the plan's and the kernels' CFGs as clusters of one graph, with profile notes if run. */
export function explainDot(prog: Program, stats: ExecuteStats | undefined): string {
  const runs = new Map(stats?.blocks.map((b) => [b.label, b.executions]));
  const kir = kirDotCfg(
    prog.kir,
    stats
      ? {
          block: (label) => `ran ${runs.get(label) ?? 0}x`,
          command: (label, i) => {
            const c = prog.kir.blocks.find((b) => b.label === label)?.commands[i];
            const k = c?.kind === 'launch' ? stats.kernels[c.kernel] : undefined;
            return k ? flow(k, 'launch') : undefined;
          },
        }
      : {},
  );
  return cfgToDot(prog.plan ? [planDotCfg(prog.plan, stats), kir] : [kir]);
}

/**
 * A one-line fixpoint progress display for a TTY: redrawn in place (at most every 100 ms, from half a second
 * into the run), erased by `done`.
 */
export function progressLine(write: (s: string) => void): { update: (p: FixpointProgress) => void; done: () => void } {
  let shown = false;
  let last = 0;
  return {
    update(p) {
      if (p.elapsedMs < 500 || p.elapsedMs - last < 100) return;
      last = p.elapsedMs;
      shown = true;
      const deltas = p.deltas.map((d) => `${d.name}=${d.rows}`).join(' ');
      write(`\r${p.relations.join(', ')}: iteration ${p.iteration}, delta ${deltas}, ${(p.elapsedMs / 1000).toFixed(1)} s\x1b[K`);
    },
    done() {
      if (shown) write('\r\x1b[K');
      shown = false;
    },
  };
}

/** The warning for base relations a run starts empty (a forgotten `--facts` is otherwise a silent empty answer). */
export function missingFactsWarning(relations: readonly string[]): string {
  if (relations.length === 0) return '';
  const s = relations.length > 1 ? 's' : '';
  return `warning: no facts for base relation${s} ${relations.join(', ')}: ${relations.length > 1 ? 'they are' : 'it is'} empty; --facts DIR reads DIR/<relation>.csv (or .tsv, .facts, .tbl)\n`;
}
