import { defineConfig } from 'vitest/config';

/**
 * `npm run chaos`: the long chaos run (test/chaos/*.chaos.ts) against the built daemon
 * (`prechaos` builds). Separate from `npm test`, which runs the short form
 * (test/integration/chaos-short.test.ts). CHAOS_SEED replays a run; CHAOS_VARIANTS=main|brokerage
 * picks variants; CHAOS_KILLS and CHAOS_LOADS size it.
 */
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.chaos.ts'],
    setupFiles: ['test/setup/secret-guard.ts'],
    testTimeout: 45 * 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One scenario at a time: each already runs a simulator, a daemon and database servers.
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['verbose'],
  },
});
