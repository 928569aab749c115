import type { Command } from 'commander';
import { checkDeployment } from '../../app/check-deployment.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { prepareCommand } from '../runtime.js';
import { renderTable } from '../table.js';

/** The work of `freight-sync check` (options and help in commands/check.ts, loaded only when it runs). */
export async function checkAction(options: { json?: boolean }, command: Command): Promise<void> {
  const runtime = await prepareCommand(command);
  const rows = await checkDeployment(runtime.deployment, { logger: runtime.logger, signal: new AbortController().signal });
  const failed = rows.filter((r) => !r.ok);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ ok: failed.length === 0, checks: rows }, null, 2)}\n`);
  } else {
    process.stdout.write(renderTable(['kind', 'target', 'result', 'ms', 'detail'], rows.map((r) => [r.kind, r.target, r.ok ? 'ok' : 'FAILED', r.durationMs, r.detail])));
    process.stdout.write(failed.length === 0 ? `\nall ${rows.length} checks passed\n` : `\n${failed.length} of ${rows.length} checks failed: ${failed.map((r) => `${r.kind} ${r.target}`).join(', ')}\n`);
  }
  process.exitCode = failed.length === 0 ? EXIT_OK : EXIT_WORK_FAILED;
}
