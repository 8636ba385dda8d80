import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'tests/**/*.test.ts'],
    // Kernel tests share one real WebGPU device per worker; llvmpipe is slow, so allow time.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // VIXEN_VALIDATE_PASSES: every compile validates the IR after each pass, naming a pass that breaks it.
    env: { EGL_PLATFORM: 'surfaceless', VIXEN_VALIDATE_PASSES: '1' },
  },
});
