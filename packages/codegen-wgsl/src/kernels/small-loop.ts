import { rowWords, type Expr, type ScalarType } from '@vixen/queryplan';
import type { KirProgram, SmallLoopPlan, SmallLoopStep, VarId } from '@vixen/kernel-ir';
import { constantLayout } from '../constants.js';
import type { KernelShaders } from '../passes.js';
import { atomicBinding, columnWords, exprWords, filterCode, header, lexCompareFn, projectCode, withArithHelpers, type ColumnResolver } from '../wgsl.js';

/** Control words before the carried variables' and logs' words: status, iterations, started, overflow. */
const CONTROL_HEAD = 4;

/** Status word of the loop kernel's control buffer (control word 0). */
export const SMALL_LOOP_STATUS = { running: 0, stopped: 1, overflow: 2, limit: 3 } as const;

/**
 * Where the loop kernel keeps what (runtime small-loop.ts lays the buffers out so):
 * - fixed (read): words 2j, 2j + 1 = word offset and rows of packed relation j (the invariants, then the recursive
 *   relations as the kernel found them), then the carried variables' rows on entry, one word each, then the most
 *   rows a log may take (the run's tuple limit less the relation's rows); rows after that.
 * - rows: per local variable `TCAP` rows, per carried variable two slots of `TCAP` rows (the iteration's input and
 *   its output), per insert step `TCAP` words (the hash slot each new row took), then per recursive relation a log of
 *   `LCAP` rows (`rowsWords` words per TCAP, `logWords` per LCAP).
 * - control (atomic): status, iterations, started, overflow; per carried variable its slot and rows; per recursive
 *   relation its log's rows (`controlWords` in all); then per recursive relation a hash set of 4 * LCAP slots.
 */
export interface SmallLoopLayout {
  /** Packed relations of the fixed buffer: plan.invariants then plan.recursive. */
  packed: VarId[];
  /** Words per TCAP rows of the rows buffer before the logs. */
  rowsWords: number;
  /** Words per LCAP rows of the logs. */
  logWords: number;
  /** Offset (in units of TCAP words) of carried variable c's slot 0, and of recursive relation r's log (LCAP words). */
  carriedAt: number[];
  logAt: number[];
  controlWords: number;
  /** Control word of carried variable c's slot (its rows follow), and of recursive relation r's log rows. */
  carriedControl: number[];
  logControl: number[];
}

export function smallLoopLayout(plan: SmallLoopPlan, program: KirProgram): SmallLoopLayout {
  const width = (v: VarId): number => rowWords(program.variables[v]!.columns);
  let at = plan.locals.reduce((n, v) => n + width(v), 0);
  const carriedAt = plan.carried.map((v) => {
    const here = at;
    at += 2 * width(v);
    return here;
  });
  at += plan.recursive.length;
  let logAt = 0;
  const logs = plan.recursive.map((v) => {
    const here = logAt;
    logAt += width(v);
    return here;
  });
  const carriedControl = plan.carried.map((_, c) => CONTROL_HEAD + 2 * c);
  const logControl = plan.recursive.map((_, r) => CONTROL_HEAD + 2 * plan.carried.length + r);
  return {
    packed: [...plan.invariants, ...plan.recursive],
    rowsWords: at,
    logWords: logAt,
    carriedAt,
    logAt: logs,
    controlWords: CONTROL_HEAD + 2 * plan.carried.length + plan.recursive.length,
    carriedControl,
    logControl,
  };
}

/** Each constant's word offset in the loop kernel's uniform: the plan's kernels' constants one after another. */
export function smallLoopConstants(plan: SmallLoopPlan, program: KirProgram): { offsets: Map<Expr, number>; words: number } {
  const offsets = new Map<Expr, number>();
  let words = 0;
  for (const id of plan.kernels) {
    const layout = constantLayout(program.kernels[id]!);
    for (const [e, o] of layout.offsets) offsets.set(e, words + o);
    words += layout.words;
  }
  return { offsets, words };
}

interface View {
  buffer: 'rd' | 'dt';
  base: string;
  count: string;
  types: ScalarType[];
}

/**
 * The loop kernel (pass smallLoop): one workgroup runs iterations of the loop block, each command a stage between
 * barriers, until the exit test's variables are empty, the dispatch's iterations are done, or rows outgrow their
 * room; an iteration that overflowed leaves the state as it was before it (the deltas are double-buffered, the logs
 * cut back), so the host's general path resumes exactly there.
 */
export function smallLoopShaders(plan: SmallLoopPlan, program: KirProgram): KernelShaders {
  const layout = smallLoopLayout(plan, program);
  const { offsets, words: constWords } = smallLoopConstants(plan, program);
  const types = (v: VarId): ScalarType[] => program.variables[v]!.columns;
  const width = (v: VarId): number => rowWords(types(v));
  const localAt = new Map<VarId, number>();
  let at = 0;
  for (const v of plan.locals) {
    localAt.set(v, at);
    at += width(v);
  }
  const nl = plan.locals.length;
  const written = new Set<VarId>();
  const slotOf = (c: number): string => (written.has(plan.carried[c]!) ? `(1u - slots[${c}])` : `slots[${c}]`);
  const view = (v: VarId): View => {
    const j = layout.packed.indexOf(v);
    if (j >= 0 && plan.invariants.includes(v)) return { buffer: 'rd', base: `rd[${2 * j}u]`, count: `rd[${2 * j + 1}u]`, types: types(v) };
    const c = plan.carried.indexOf(v);
    if (c >= 0) {
      const slot = slotOf(c);
      return { buffer: 'dt', base: `TCAP * (${layout.carriedAt[c]}u + ${slot} * ${width(v)}u)`, count: `min(atomicLoad(&cnt[${nl + 2 * c}u + ${slot}]), TCAP)`, types: types(v) };
    }
    const i = plan.locals.indexOf(v);
    if (i < 0) throw new Error(`internal: small loop reads variable ${v} it does not hold`);
    return { buffer: 'dt', base: `TCAP * ${localAt.get(v)}u`, count: `min(atomicLoad(&cnt[${i}u]), TCAP)`, types: types(v) };
  };
  /** Appends a row to `v` (written in this stage): `rowWords` the words, `extra` statements with the row index k. */
  const emit = (v: VarId, rowWordsCode: string, extra = ''): string => {
    const c = plan.carried.indexOf(v);
    const counter = c >= 0 ? `${nl + 2 * c}u + (1u - slots[${c}])` : `${plan.locals.indexOf(v)}u`;
    const base = c >= 0 ? `TCAP * (${layout.carriedAt[c]}u + (1u - slots[${c}]) * ${width(v)}u)` : `TCAP * ${localAt.get(v)}u`;
    return `{
        let k = atomicAdd(&cnt[${counter}], 1u);
        if (k < TCAP) {
          let ob = ${base} + k * ${width(v)}u;
${rowWordsCode}${extra}
        } else { atomicOr(&ovf, 1u); }
      }`;
  };
  const copyRow = (from: View, b: string): string =>
    Array.from({ length: rowWords(from.types) }, (_, w) => `          dt[ob + ${w}u] = ${from.buffer}[${b} + ${w}u];`).join('\n');
  const helpers: string[] = [];
  const helperNames = new Set<string>();
  const helper = (name: string, code: () => string): string => {
    if (!helperNames.has(name)) {
      helperNames.add(name);
      helpers.push(code());
    }
    return name;
  };
  /** Full-row comparison of a row of buffer `a` with one of `b` (their first words a, b), all words unsigned. */
  const rowCompare = (a: string, b: string, w: number): string =>
    helper(`cmpRow_${a}_${b}_${w}`, () => lexCompareFn(`cmpRow_${a}_${b}_${w}`, Array.from({ length: w }, (_, k) => [`${a}[a + ${k}u]`, `${b}[b + ${k}u]`] as const)));
  const search = (cmp: string, b: string, base: string, count: string, w: number): string => `var lo = 0u;
    var hi = ${count};
    var found = false;
    let e0 = ${base};
    while (lo < hi) {
      let mid = lo + (hi - lo) / 2u;
      let c = ${cmp}(${b}, e0 + mid * ${w}u);
      if (c == 0) { found = true; break; }
      if (c > 0) { lo = mid + 1u; } else { hi = mid; }
    }`;
  const barrier = '  storageBarrier();\n  workgroupBarrier();';

  /** A step's code: one part per barrier interval it needs (an insert's second part reads what its first wrote). */
  const stage = (s: SmallLoopStep, index: number): string[] => {
    switch (s.kind) {
      case 'map': {
        const input = view(s.input);
        const cols: ColumnResolver = (c) => columnWords(input.buffer, 'b', input.types, c);
        // Each negated probe: the first row of its relation with the row's key (a binary search by the key words),
        // then the rows from there with that key until one passes the probe's filter (a hit drops the row).
        const searches = (s.absent ?? []).map((a, j) => {
          const right = view(a.right);
          const wr = rowWords(right.types);
          const keyCols: ColumnResolver = (c) => columnWords(input.buffer, 'a', input.types, c);
          const pairs = a.keys.flatMap((e, k) => {
            const theirs = columnWords('rd', 'b', right.types, a.rightKeys[k]!);
            return exprWords(e, keyCols, offsets).map((w, x) => [w, theirs[x]!] as const);
          });
          const cmp = `cmpAbsent${index}_${j}`;
          helpers.push(lexCompareFn(cmp, pairs));
          const rowCols: ColumnResolver = (c) => columnWords('rd', 'rb', right.types, c);
          return `      if (!hit) {
        let r0 = ${right.base};
        let m = ${right.count};
        var lo = 0u;
        var hi = m;
        while (lo < hi) {
          let mid = lo + (hi - lo) / 2u;
          if (${cmp}(b, r0 + mid * ${wr}u) > 0) { lo = mid + 1u; } else { hi = mid; }
        }
        for (var q = lo; q < m; q = q + 1u) {
          let rb = r0 + q * ${wr}u;
          if (${cmp}(b, rb) != 0) { break; }
          if (${filterCode(a.filter, rowCols, offsets)}) { hit = true; break; }
        }
      }`;
        });
        return [`  {
    let n = ${input.count};
    let b0 = ${input.base};
    for (var i = lid; i < n; i = i + WG) {
      let b = b0 + i * ${rowWords(input.types)}u;
      var hit = !(${filterCode(s.filter, cols, offsets)});
${searches.join('\n')}
      if (!hit) ${emit(s.output, projectCode(s.project, 'dt', 'ob', cols, offsets))}
    }
  }`];
      }
      case 'join': {
        const left = view(s.left);
        const right = view(s.right);
        const wl = rowWords(left.types);
        const wr = rowWords(right.types);
        const pairs = s.leftKeys.flatMap((lk, k) => {
          const a = columnWords(left.buffer, 'a', left.types, lk);
          const b = columnWords('rd', 'b', right.types, s.rightKeys[k]!);
          return a.map((x, w) => [x, b[w]!] as const);
        });
        const cmp = `cmpJoin${index}`;
        helpers.push(lexCompareFn(cmp, pairs));
        const cols: ColumnResolver = (c) =>
          c < left.types.length ? columnWords(left.buffer, 'lb', left.types, c) : columnWords('rd', 'rb', right.types, c - left.types.length);
        return [`  {
    let n = ${left.count};
    let l0 = ${left.base};
    let r0 = ${right.base};
    let m = ${right.count};
    for (var i = lid; i < n; i = i + WG) {
      let lb = l0 + i * ${wl}u;
      var lo = 0u;
      var hi = m;
      while (lo < hi) {
        let mid = lo + (hi - lo) / 2u;
        if (${cmp}(lb, r0 + mid * ${wr}u) > 0) { lo = mid + 1u; } else { hi = mid; }
      }
      var end = lo;
      hi = m;
      while (end < hi) {
        let mid = end + (hi - end) / 2u;
        if (${cmp}(lb, r0 + mid * ${wr}u) >= 0) { end = mid + 1u; } else { hi = mid; }
      }
      for (var j = lo; j < end; j = j + 1u) {
        let rb = r0 + j * ${wr}u;
        if (${filterCode(s.filter, cols, offsets)}) ${emit(s.output, projectCode(s.project, 'dt', 'ob', cols, offsets))}
      }
    }
  }`];
      }
      case 'rows':
        return [
          s.inputs
          .map((v) => {
            const input = view(v);
            return `  {
    let n = ${input.count};
    let b0 = ${input.base};
    for (var i = lid; i < n; i = i + WG) {
      let b = b0 + i * ${rowWords(input.types)}u;
      ${emit(s.output, copyRow(input, 'b'))}
    }
  }`;
            })
            .join('\n'),
        ];
      case 'absent': {
        const input = view(s.input);
        const right = view(s.right);
        const w = rowWords(input.types);
        const cmp = rowCompare(input.buffer, 'rd', w);
        return [`  {
    let n = ${input.count};
    let b0 = ${input.base};
    for (var i = lid; i < n; i = i + WG) {
      let b = b0 + i * ${w}u;
      ${search(cmp, 'b', right.base, right.count, w)}
      if (!found) ${emit(s.output, copyRow(input, 'b'))}
    }
  }`];
      }
      case 'insert': {
        const r = plan.recursive.indexOf(s.relation);
        const j = layout.packed.indexOf(s.relation);
        const input = view(s.input);
        if (input.buffer !== 'dt') throw new Error('internal: a small loop inserts rows it derived');
        const w = rowWords(input.types);
        const cmp = rowCompare('dt', 'rd', w);
        const eq = helper(`eqRow${w}`, () => `fn eqRow${w}(a: u32, b: u32) -> bool {\n  return ${Array.from({ length: w }, (_, k) => `dt[a + ${k}u] == dt[b + ${k}u]`).join(' && ')};\n}`);
        const hash = helper(
          `hashRow${w}`,
          () => `fn hashRow${w}(b: u32) -> u32 {
  var h = 2166136261u;
${Array.from({ length: w }, (_, k) => `  h = (h ^ dt[b + ${k}u]) * 16777619u;`).join('\n')}
  h = h ^ (h >> 16u);
  h = h * 0x7feb352du;
  return h ^ (h >> 15u);
}`,
        );
        const slotList = `TCAP * ${layout.rowsWords - plan.recursive.length + r}u`;
        const log = `(TCAP * ${layout.rowsWords}u + LCAP * ${layout.logAt[r]}u)`;
        // Phase 1: rows absent from the relation claim a hash slot (tagged with their input row until phase 2).
        const phase1 = `  {
    let n = ${input.count};
    let b0 = ${input.base};
    let hb = ${layout.controlWords}u + ${r}u * HS;
    for (var i = lid; i < n; i = i + WG) {
      let b = b0 + i * ${w}u;
      ${search(cmp, 'b', `rd[${2 * j}u]`, `rd[${2 * j + 1}u]`, w)}
      if (found) { continue; }
      var h = ${hash}(b) & (HS - 1u);
      var tries = 0u;
      loop {
        tries = tries + 1u;
        if (tries > 2u * HS) { atomicOr(&ovf, 2u); break; }
        let s = atomicLoad(&ct[hb + h]);
        if (s == 0u) {
          let x = atomicCompareExchangeWeak(&ct[hb + h], 0u, CAND | i);
          if (x.exchanged) {
            ${emit(s.output, copyRow(input, 'b'), `\n          dt[${slotList} + k] = hb + h;`)}
            break;
          }
          continue;
        }
        var other = ${log} + (s - 1u) * ${w}u;
        if ((s & CAND) != 0u) { other = b0 + (s & ~CAND) * ${w}u; }
        if (${eq}(b, other)) { break; }
        h = (h + 1u) & (HS - 1u);
      }
    }
  }`;
        // Phase 2: the new rows go to the log; their slots then name the log row. The output (a delta, where the
        // insert writes it) is read where phase 1 wrote it.
        written.add(s.output);
        const out = view(s.output);
        const phase2 = `  {
    let n = ${out.count};
    let b0 = ${out.base};
    let l0 = ${log};
    for (var k = lid; k < n; k = k + WG) {
      let at = logn[${r}] + k;
      if (at >= LMAX) { atomicOr(&ovf, 2u); continue; }
${Array.from({ length: w }, (_, q) => `      dt[l0 + at * ${w}u + ${q}u] = dt[b0 + k * ${w}u + ${q}u];`).join('\n')}
      atomicStore(&ct[dt[${slotList} + k]], at + 1u);
    }
  }`;
        return [phase1, phase2];
      }
    }
  };
  // Steps run as early as their inputs allow: those of one level share the barrier interval (each writes rows of its
  // own; a delta read before its write in the block reads the slot the write does not touch). A variable's level is
  // that of the part that wrote its rows, an insert's first.
  const levels: string[][] = [];
  const producedAt = new Map<VarId, number>();
  plan.steps.forEach((s, i) => {
    const inputs = s.kind === 'join' ? [s.left] : s.kind === 'rows' ? s.inputs : [s.input];
    const level = Math.max(0, ...inputs.map((v) => (producedAt.has(v) ? producedAt.get(v)! + 1 : 0)));
    stage(s, i).forEach((part, k) => (levels[level + k] ??= []).push(part));
    producedAt.set(s.output, level);
    written.add(s.output);
  });
  const stages = levels.map((parts) => parts.join('\n'));
  const nc = plan.carried.length;
  const nr = plan.recursive.length;
  const counters = nl + 2 * nc;
  const insertOutputs = plan.steps.flatMap((s) => (s.kind === 'insert' ? [s.output] : []));
  const carriedInit = plan.carried.map((_, c) => `      atomicStore(&ct[${layout.carriedControl[c]}u], 0u);\n      atomicStore(&ct[${layout.carriedControl[c]! + 1}u], rd[${2 * layout.packed.length + c}u]);`);
  const code = `${atomicBinding(header('smallLoop', ['rd', 'dt', 'ct'], constWords), 'ct')}
const CAND: u32 = 0x80000000u;
var<workgroup> cnt: array<atomic<u32>, ${Math.max(1, counters)}>;
var<workgroup> slots: array<u32, ${Math.max(1, nc)}>;
var<workgroup> logn: array<u32, ${Math.max(1, nr)}>;
var<workgroup> ovf: atomic<u32>;
var<workgroup> go: u32;
var<workgroup> ran: u32;
var<private> TCAP: u32;
var<private> LCAP: u32;
var<private> HS: u32;
var<private> LMAX: u32;
${helpers.join('\n')}
// The rows an iteration writes start empty: its locals and the carried variables' slots it writes.
fn resetCounts() {
${plan.locals.map((_, i) => `  atomicStore(&cnt[${i}u], 0u);`).join('\n')}
${plan.carried.map((_, c) => `  atomicStore(&cnt[${nl + 2 * c}u + 1u - slots[${c}]], 0u);`).join('\n')}
  atomicStore(&ovf, 0u);
}
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  TCAP = u[0].z;
  LCAP = u[0].w;
  HS = 4u * LCAP;
  LMAX = min(LCAP, rd[${2 * layout.packed.length + plan.carried.length}u]);
  if (lid == 0u) {
    if (atomicLoad(&ct[2]) == 0u) {
      atomicStore(&ct[2], 1u);
${carriedInit.join('\n')}
    }
${plan.carried.map((_, c) => `    slots[${c}] = atomicLoad(&ct[${layout.carriedControl[c]}u]);\n    atomicStore(&cnt[${nl + 2 * c}u + slots[${c}]], atomicLoad(&ct[${layout.carriedControl[c]! + 1}u]));`).join('\n')}
${plan.recursive.map((_, r) => `    logn[${r}] = atomicLoad(&ct[${layout.logControl[r]}u]);`).join('\n')}
    ran = 0u;
    resetCounts();
    go = select(0u, 1u, atomicLoad(&ct[0]) == ${SMALL_LOOP_STATUS.running}u && atomicLoad(&ct[1]) < u[0].y && u[0].x > 0u);
  }
  if (workgroupUniformLoad(&go) == 0u) { return; }
  loop {
${stages.join(`\n${barrier}\n`)}
${barrier}
    if (lid == 0u) {
      let o = atomicLoad(&ovf);
      var status = ${SMALL_LOOP_STATUS.running}u;
      if (o != 0u) {
        status = ${SMALL_LOOP_STATUS.overflow}u;
        atomicStore(&ct[3], o);
      } else {
        let empty = ${plan.exit.map((v) => `${view(v).count} == 0u`).join(' && ')};
${insertOutputs.map((v, r) => `        logn[${r}] = logn[${r}] + ${view(v).count};`).join('\n')}
${plan.carried.map((_, c) => `        slots[${c}] = 1u - slots[${c}];`).join('\n')}
        if (empty) {
          status = ${SMALL_LOOP_STATUS.stopped}u;
        } else {
          let total = atomicLoad(&ct[1]) + 1u;
          atomicStore(&ct[1], total);
          ran = ran + 1u;
          if (total >= u[0].y) { status = ${SMALL_LOOP_STATUS.limit}u; }
        }
      }
      atomicStore(&ct[0], status);
      resetCounts();
      go = select(0u, 1u, status == ${SMALL_LOOP_STATUS.running}u && ran < u[0].x);
    }
    if (workgroupUniformLoad(&go) == 0u) { break; }
  }
  if (lid == 0u) {
${plan.carried.map((_, c) => `    atomicStore(&ct[${layout.carriedControl[c]}u], slots[${c}]);\n    atomicStore(&ct[${layout.carriedControl[c]! + 1}u], atomicLoad(&cnt[${nl + 2 * c}u + slots[${c}]]));`).join('\n')}
${plan.recursive.map((_, r) => `    atomicStore(&ct[${layout.logControl[r]}u], logn[${r}]);`).join('\n')}
  }
}
`;
  return { smallLoop: withArithHelpers(code) };
}
