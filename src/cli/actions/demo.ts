import type { Command } from 'commander';
import { runDemo } from '../../app/demo.js';
import { installShutdown } from '../../app/shutdown.js';
import { UsageError } from '../../util/errors.js';
import { createLogger } from '../../util/logger.js';
import { globalOptions } from '../command-context.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { renderSyncSummary } from '../sync-summary.js';
import { renderTable } from '../table.js';

/** The work of `freight-sync demo` (options and help in commands/demo.ts, loaded only when it runs). */
export async function demoAction(options: { output: string; loads: string }, command: Command): Promise<void> {
  const loads = Number(options.loads);
  if (!Number.isInteger(loads) || loads < 1 || loads > 1_000_000) throw new UsageError(`--loads: expected an integer 1..1000000, got "${options.loads}"`);
  const logger = createLogger({ level: (globalOptions(command).logLevel as 'warn' | undefined) ?? 'warn' });
  const shutdown = installShutdown({ graceMs: 5000 });
  const started = Date.now();
  try {
    const result = await runDemo({ outputDir: options.output, logger, loads, signal: shutdown.abortSignal, print: (t) => process.stdout.write(t) });
    process.stdout.write('\npass 1 (initial):\n' + renderSyncSummary(result.firstPass));
    process.stdout.write('\npass 2 (incremental):\n' + renderSyncSummary(result.secondPass));
    const sim = result.simulator;
    const faults = Object.values(sim.faults).reduce((a, b) => a + b, 0);
    process.stdout.write(
      '\nsimulator saw:\n' +
        renderTable(['requests', 'faults injected', '429s', 'tokens issued'], [[sim.requests, faults, sim.rateLimited, sim.tokensIssued]]),
    );
    const c = result.loadsCheck;
    process.stdout.write(
      `\ncheck of the loads CSV (latest version per key) against the simulator's final data:\n` +
        renderTable(['loads on server', 'missing', 'stale', 'wrong tombstone', 'unknown keys'], [[c.truth, c.missing.length, c.stale.length, c.wrongOp.length, c.phantom.length]]),
    );
    process.stdout.write(`\n${result.files} CSV files under ${options.output}/csv, state database ${options.output}/freight-sync.sqlite; ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    process.stdout.write(result.ok ? 'demo OK\n' : 'demo FAILED: see the tables above\n');
    process.exitCode = result.ok ? EXIT_OK : EXIT_WORK_FAILED;
  } finally {
    shutdown.dispose();
  }
}
