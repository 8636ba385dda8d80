import { describe, expect, it } from 'vitest';
import { VixenError } from '@vixen/queryplan';
import { checkRunOptions } from '../src/api-options.js';

const message = (options: unknown): string => {
  try {
    checkRunOptions(options, 'run');
  } catch (e) {
    expect(e).toBeInstanceOf(VixenError);
    return (e as VixenError).message;
  }
  throw new Error('checkRunOptions accepted bad options');
};

describe('checkRunOptions', () => {
  it('accepts the options it knows, unknown keys and fields left undefined', () => {
    expect(() => checkRunOptions({}, 'run')).not.toThrow();
    const given = { outputs: ['a'], facts: { e: [[1, 2]] }, maxIterations: 3, timeout: 1.5, maxDeviceMemory: '2GiB', profile: true, onProgress: () => {} };
    expect(() => checkRunOptions(given, 'run')).not.toThrow();
    expect(() => checkRunOptions({ extra: 1, maxTuples: undefined }, 'run')).not.toThrow();
  });

  it('names every bad field with its path, and the call', () => {
    const m = message({ outputs: ['a', 7], maxIterations: 0, onProgress: 'x', facts: { e: [[1], 2] } });
    expect(m).toMatch(/^invalid run options: /);
    expect(m).toContain('outputs.1: ');
    expect(m).toContain('maxIterations: expected a positive whole number');
    expect(m).toContain('onProgress: expected a function');
    expect(m).toContain('facts.e.1: expected array, received number');
    expect(m.split('; ')).toHaveLength(4);
  });

  it('rejects options that are not an object', () => {
    for (const bad of [null, 3, 'x', [1]]) expect(message(bad)).toMatch(/^invalid run options: \(options\): /);
  });
});
