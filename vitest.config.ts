import { defineConfig } from 'vitest/config';

/**
 * Test files whose stores come from `freshStateDatabase`: besides the default run (SQLite), they
 * run again with the state on PostgreSQL (a fresh schema per test), so the stores, their SQL and
 * the code on top of them are proven on both dialects the state store supports.
 */
const STATE_HEAVY_FILES = [
  'test/unit/outbound-dispatcher.test.ts',
  'test/unit/outbound-command-runner.test.ts',
  'test/unit/outbound-write-back.test.ts',
  'test/unit/outbound-dry-run.test.ts',
  'test/unit/sync-invoices.test.ts',
  'test/unit/notify-dedup-rate-limit.test.ts',
  'test/integration/sink-ack-several-sinks.test.ts',
];

const shared = {
  // Fails a test that writes a registered secret to stdout/stderr (test/setup/secret-guard.ts).
  setupFiles: ['test/setup/secret-guard.ts'],
  // One root for every temporary folder of the run, removed at its end (test/setup/temp-root.ts).
  globalSetup: ['test/setup/temp-root.ts'],
  testTimeout: 120_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    pool: 'forks',
    // Integration tests start real servers on loopback; two cores, so keep parallelism modest.
    maxWorkers: 2,
    projects: [
      { test: { ...shared, name: 'default', include: ['test/**/*.test.ts'] } },
      {
        test: {
          ...shared,
          name: 'state-on-postgres',
          include: STATE_HEAVY_FILES,
          setupFiles: [...shared.setupFiles, 'test/setup/state-cleanup.ts'],
          env: { FREIGHT_SYNC_TEST_STATE: 'postgres' },
        },
      },
    ],
  },
});
