/**
 * Interprets the kernel CFG on the device (Red Fox §3.6): runs each block's commands in order, keeps every
 * managed variable's buffer and row count, frees what liveness says is dead, and evaluates branches from the
 * host-known row counts. Only output relations are read back in full.
 */
import { generateKernelShaders, kernelConstants, type KernelShaders } from '@vixen/codegen-wgsl';
import { kernelInputs, type KirKernel, type KirProgram, type KirVariable, type VarId } from '@vixen/kernel-ir';
import { compareRows, rowWords, VixenError, type Row } from '@vixen/queryplan';
import {
  downloadRelation,
  releaseRelation,
  runKernel,
  uploadRelation,
  type DeviceRelation,
  type Gpu,
} from './gpu/index.js';
import { decodeRows, encodeRows, encodeValue, StringDictionary } from './encoding.js';

export interface ExecuteOptions {
  /** Relations to read back (default: those marked output). */
  outputs?: readonly string[];
  /** Upper bound on executed blocks, so a runaway loop ends with an error instead of hanging. */
  maxBlockSteps?: number;
}

export interface KernelProfile {
  kernel: number;
  kind: KirKernel['kind'];
  launches: number;
  rowsIn: number;
  rowsOut: number;
  milliseconds: number;
}

export interface ExecuteStats {
  blockSteps: number;
  launches: number;
  milliseconds: number;
  kernels: KernelProfile[];
}

export interface ExecuteResult {
  relations: Map<string, Row[]>;
  stats: ExecuteStats;
}

/** Every string the run can meet: facts and kernel constants. */
function buildDictionary(program: KirProgram, initial: ReadonlyMap<string, readonly Row[]>): StringDictionary {
  const strings: string[] = [];
  const byName = new Map(program.relations.map((r) => [r.name, r]));
  for (const [name, rows] of initial) {
    const cols = byName.get(name)?.columns ?? [];
    cols.forEach((col, i) => {
      if (col.type === 'string') for (const row of rows) strings.push(row[i] as string);
    });
  }
  for (const k of program.kernels) {
    for (const c of kernelConstants(k)) if (c.type === 'string') strings.push(c.value as string);
  }
  return new StringDictionary(strings);
}

function constantWords(kernel: KirKernel, dict: StringDictionary): Uint32Array {
  const consts = kernelConstants(kernel);
  const out = new Uint32Array(consts.reduce((n, c) => n + rowWords([c.type]), 0));
  let at = 0;
  for (const c of consts) at = encodeValue(c.type, c.value, dict, out, at);
  return out;
}

export async function executeKir(
  gpu: Gpu,
  program: KirProgram,
  shaders: readonly KernelShaders[],
  initial: ReadonlyMap<string, readonly Row[]>,
  options: ExecuteOptions = {},
): Promise<ExecuteResult> {
  const started = performance.now();
  const dict = buildDictionary(program, initial);
  const variables = program.variables;
  const values = new Map<VarId, DeviceRelation>();
  const emptyOf = (v: KirVariable): DeviceRelation => ({ buffer: null, count: 0, width: rowWords(v.columns) });
  const valueOf = (id: VarId): DeviceRelation => values.get(id) ?? emptyOf(variables[id]!);
  const constWords = program.kernels.map((k) => constantWords(k, dict));
  const profile: KernelProfile[] = program.kernels.map((k) => ({
    kernel: k.id,
    kind: k.kind,
    launches: 0,
    rowsIn: 0,
    rowsOut: 0,
    milliseconds: 0,
  }));

  /** Replaces a variable's value, returning the old buffer to the pool unless another variable still holds it. */
  const assign = (id: VarId, next: DeviceRelation | undefined): void => {
    const old = values.get(id);
    if (next) values.set(id, next);
    else values.delete(id);
    if (old?.buffer && old.buffer !== next?.buffer && ![...values.values()].some((v) => v.buffer === old.buffer)) {
      releaseRelation(gpu, old);
    }
  };

  try {
    await loadInitialRelations(gpu, program, initial, dict, assign);

    const blocks = new Map(program.blocks.map((b) => [b.label, b]));
    const maxSteps = options.maxBlockSteps ?? 1_000_000;
    let label = program.entry;
    let steps = 0;
    let launches = 0;
    for (;;) {
      const block = blocks.get(label);
      if (!block) throw new Error(`internal: no block labelled ${label}`);
      if (++steps > maxSteps) {
        throw new VixenError({ severity: 'error', message: `evaluation did not reach a fixpoint within ${maxSteps} block steps` });
      }
      for (const cmd of block.commands) {
        switch (cmd.kind) {
          case 'launch': {
            const kernel = program.kernels[cmd.kernel]!;
            const inputs = kernelInputs(kernel).map(valueOf);
            const t0 = performance.now();
            const out = await runKernel(gpu, kernel, shaders[kernel.id]!, inputs, constWords[kernel.id]!, variables);
            const p = profile[kernel.id]!;
            p.milliseconds += performance.now() - t0;
            p.launches += 1;
            p.rowsIn += inputs.reduce((n, r) => n + r.count, 0);
            p.rowsOut += out.count;
            launches += 1;
            assign(kernel.output, out);
            break;
          }
          case 'free':
            for (const v of cmd.vars) assign(v, undefined);
            break;
          case 'clear':
            assign(cmd.var, undefined);
            break;
        }
      }
      const t = block.terminator;
      if (t.kind === 'halt') {
        const relations = await readOutputs(gpu, program, options.outputs, dict, valueOf);
        return {
          relations,
          stats: { blockSteps: steps, launches, milliseconds: performance.now() - started, kernels: profile },
        };
      }
      label = t.kind === 'jump' ? t.target : t.condition.vars.every((v) => valueOf(v).count === 0) ? t.ifTrue : t.ifFalse;
    }
  } finally {
    for (const id of [...values.keys()]) assign(id, undefined);
  }
}

/**
 * Uploads facts and brings each relation into canonical form (sorted, duplicate-free) with the same
 * sort and unique kernels the plan uses, so the invariant holds from the first block on.
 */
async function loadInitialRelations(
  gpu: Gpu,
  program: KirProgram,
  initial: ReadonlyMap<string, readonly Row[]>,
  dict: StringDictionary,
  assign: (id: VarId, v: DeviceRelation | undefined) => void,
): Promise<void> {
  for (const [name, rows] of initial) {
    const id = program.relationVars[name];
    if (id === undefined || rows.length === 0) continue;
    const variable = program.variables[id]!;
    const width = rowWords(variable.columns);
    const raw = uploadRelation(gpu, encodeRows(rows, variable.columns, dict), width);
    const all = variable.columns.map((_, i) => i);
    const sort: KirKernel = { kind: 'sort', id: -1, input: id, output: id, keys: all };
    const unique: KirKernel = { kind: 'unique', id: -1, input: id, output: id };
    const none = new Uint32Array(0);
    const sorted = await runKernel(gpu, sort, generateKernelShaders(sort, program.variables), [raw], none, program.variables);
    if (sorted.buffer !== raw.buffer) releaseRelation(gpu, raw);
    const canonical = await runKernel(gpu, unique, generateKernelShaders(unique, program.variables), [sorted], none, program.variables);
    if (canonical.buffer !== sorted.buffer) releaseRelation(gpu, sorted);
    assign(id, canonical);
  }
}

async function readOutputs(
  gpu: Gpu,
  program: KirProgram,
  wanted: readonly string[] | undefined,
  dict: StringDictionary,
  valueOf: (id: VarId) => DeviceRelation,
): Promise<Map<string, Row[]>> {
  const names = wanted ?? program.relations.filter((r) => r.output).map((r) => r.name);
  const result = new Map<string, Row[]>();
  for (const name of names) {
    const id = program.relationVars[name];
    if (id === undefined) throw new VixenError({ severity: 'error', message: `no relation named ${name}` });
    const variable = program.variables[id]!;
    const words = await downloadRelation(gpu, valueOf(id));
    // Device order is unsigned-word order; users see typed order (negative numbers first).
    result.set(name, decodeRows(words, variable.columns, dict).sort(compareRows));
  }
  return result;
}
