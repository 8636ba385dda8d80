/**
 * The kernel-IR passes assume derived relations without inline facts start empty (KirProgram.emptyOnEntry): a run
 * that gives such a relation rows is refused with a user error instead of computing a wrong answer; inline facts
 * and base relations are unaffected.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { VixenError } from '@vixen/queryplan';
import { compile, openGpu, type Gpu } from '../src/index.js';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await openGpu();
});
afterAll(() => gpu?.dispose());

const source = `edge(x, y) -> int32(x), int32(y).
  seed(x) -> int32(x).
  seed(7).
  reach(y) <- seed(y).
  reach(y) <- reach(x), edge(x, y).`;

it('records the assumption and refuses rows for a derived relation assumed empty', async () => {
  const prog = compile(source, { filename: 'reach.logic' });
  expect(prog.kir.emptyOnEntry).toContain('reach');
  expect(prog.kir.emptyOnEntry).not.toContain('seed');
  const ok = await prog.run({ gpu, facts: { edge: [[7, 8], [8, 9]] } });
  expect(ok.relations.get('reach')).toEqual([[7], [8], [9]]);
  const refused = prog.run({ gpu, facts: { edge: [[7, 8]], reach: [[1]] } });
  await expect(refused).rejects.toThrow(VixenError);
  await expect(prog.run({ gpu, facts: { edge: [[7, 8]], reach: [[1]] } })).rejects.toThrow(/derived relation reach: this compiled program starts it empty/);
});
