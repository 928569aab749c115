import type { Command } from 'commander';
import { z } from 'zod';
import { collectStatus } from '../../app/stream-status.js';
import { renderOutboundStatus } from '../../outbound/outbound-status.js';
import { describeError } from '../../util/errors.js';
import { prepareCommand, withApp } from '../runtime.js';
import { renderTable } from '../table.js';

function formatLag(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}

/** The work of `freight-sync status` (options and help in commands/status.ts, loaded only when it runs). */
export async function statusAction(options: { json?: boolean; offline?: boolean }, command: Command): Promise<void> {
  const runtime = await prepareCommand(command);
  await withApp(runtime, { withConnectors: false }, async (app) => {
    let serverNow: Date | undefined;
    // A reauth_required account is not asked for a token (that is what the mark prevents).
    const marked = await app.client.tokens.reauthRequired();
    if (!options.offline && !marked) {
      try {
        // Any authenticated answer carries the server's Date header.
        await app.client.tokens.accessToken();
        if (!app.client.clock.known) await app.client.call({ method: 'GET', route: '/load-document-type', schema: z.unknown() });
        serverNow = app.client.clock.now();
      } catch (error) {
        runtime.logger.warn(`could not read the server clock (${describeError(error)}); lag is measured against the local clock`);
      }
    }
    const report = await collectStatus(app, serverNow);
    if (options.json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return;
    }
    const rows = report.streams.map((s) => [
      s.stream,
      s.enabled ? 'yes' : 'no',
      s.checkpoint ?? '-',
      s.inProgress ? 'reading' : s.checkpoint ? 'idle' : 'new',
      formatLag(s.lagSeconds),
      s.lastRun ? `${s.lastRun.status} ${s.lastRun.startedAt}` : '-',
      s.recordsKnown,
      s.rejected,
      s.lastRun?.error ? s.lastRun.error.slice(0, 80) : '',
    ]);
    if (report.auth.reauthRequired) {
      process.stdout.write(
        `REAUTH REQUIRED: account ${report.auth.account} since ${report.auth.reauthRequired.since}: ${report.auth.reauthRequired.reason}\n` +
          'API work for this account is paused. Give new credentials in api.auth (a new token pair, or clientId/clientSecret), then run `freight-sync check` and restart the daemon.\n\n',
      );
    }
    process.stdout.write(
      report.lease
        ? `worked by ${report.lease.holder} (lease epoch ${report.lease.epoch}, held until ${report.lease.expiresAt})\n\n`
        : 'no daemon holds the account\'s lease now\n\n',
    );
    process.stdout.write(renderTable(['stream', 'enabled', 'checkpoint', 'state', `lag (${report.clock})`, 'last run', 'records', 'rejected', 'last error'], rows));
    const quarantined = report.streams.reduce((n, s) => n + s.rejected, 0) + report.rejectedWebhookEvents;
    if (quarantined > 0) process.stdout.write(`\n${quarantined} quarantined entr${quarantined === 1 ? 'y' : 'ies'} (webhook events: ${report.rejectedWebhookEvents}): freight-sync rejected list\n`);
    process.stdout.write(`\ninvoices not yet FULL_PAID (followed through their loads' changes): ${report.invoices.open}; loads awaiting invoice gap-fill: ${report.invoices.gapFillCandidates}\n`);
    process.stdout.write(renderOutboundStatus(report.outbound));
  });
}
