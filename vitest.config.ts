import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Fails a test that writes a registered secret to stdout/stderr (test/setup/secret-guard.ts).
    setupFiles: ['test/setup/secret-guard.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Integration tests start real servers on loopback; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
