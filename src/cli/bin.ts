#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { applyMemoryPolicy } from './memory-policy.js';
import { mistypedNumberSettings } from './mistyped-settings.js';
import { reexecWithStartUpSettings } from './start-up-settings.js';
import { holdOptimisingCompilerWhileLoading } from './start-up-tiering.js';
import { raiseInterruptBudget } from './tier-up-budget.js';

// A long command started without the memory settings a process takes only at start (glibc's
// malloc, the young generation's cap on Node ≥ 22) replaces itself with one that has them, where
// Node can (start-up-settings.ts); before anything else runs.
reexecWithStartUpSettings(fileURLToPath(import.meta.url));

// Before anything else is loaded (memory-policy.ts, tier-up-budget.ts, start-up-tiering.ts: TurboFan
// waits until a command's action starts).
applyMemoryPolicy();
raiseInterruptBudget();
holdOptimisingCompilerWhileLoading();
for (const warning of mistypedNumberSettings(process.env)) process.stderr.write(`freight-sync: ${warning}\n`);

// Benchmarks read the process's peak memory from this line (peak-rss.ts).
if (process.env.FREIGHT_SYNC_REPORT_RSS === '1') {
  const { peakRssKib } = await import('./peak-rss.js');
  process.on('exit', () => process.stderr.write(`freight-sync: peak-rss-kib=${peakRssKib()}\n`));
}

// `freight-sync status --json | head`: a reader that closed the pipe wants no more output; end
// quietly as other command-line tools do instead of dying on an unhandled EPIPE.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

const [{ describeError }, { scrubSecrets }, { EXIT_WORK_FAILED }, { main }] = await Promise.all([
  import('../util/errors.js'),
  import('../util/secrets.js'),
  import('./exit-codes.js'),
  import('./main.js'),
]);

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`freight-sync: ${scrubSecrets(describeError(error))}\n`);
    process.exitCode = EXIT_WORK_FAILED;
  },
);
