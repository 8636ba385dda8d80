import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'tests/**/*.test.ts'],
    // Kernel tests share one real WebGPU device per worker; llvmpipe is slow, so allow time.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    env: { EGL_PLATFORM: 'surfaceless' },
  },
});
