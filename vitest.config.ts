import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Integration tests start real servers on loopback; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
