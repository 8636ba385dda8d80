/** Compiling for known outputs (CompileOptions.outputs): other derived relations become temporaries. */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { VixenError } from '@vixen/queryplan';
import { compile, openGpu, type Gpu } from '../src/index.js';

const SOURCE = `
e(x, y) -> int32(x), int32(y).
e(1, 2). e(2, 3). e(3, 1). e(1, 5).
hop(y) <- e(_, y).
reached[] = n <- agg<<n = count()>> hop(y).
`;

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

test('relations outside the outputs become temporaries; the outputs come out the same', async () => {
  const all = compile(SOURCE);
  const narrow = compile(SOURCE, { outputs: ['reached'] });
  expect(all.relations.find((r) => r.name === 'hop')!.kind).toBe('idb');
  expect(narrow.relations.find((r) => r.name === 'hop')!.kind).toBe('temp');
  expect(narrow.outputNames).toEqual(['reached']);
  const want = (await all.run({ gpu, outputs: ['reached'] })).relations.get('reached');
  expect(want).toEqual([[4]]);
  expect((await narrow.run({ gpu })).relations.get('reached')).toEqual(want);
  // hop is no longer something a run can return.
  await expect(narrow.run({ gpu, outputs: ['hop'] })).rejects.toThrow(/unknown output relation: hop/);
});

test('an output the program does not define is a compile error', () => {
  expect(() => compile(SOURCE, { outputs: ['nope'] })).toThrow(VixenError);
  expect(() => compile(SOURCE, { outputs: ['nope'] })).toThrow(/unknown output relation: nope/);
});
