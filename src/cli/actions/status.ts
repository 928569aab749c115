import type { Command } from 'commander';
import { z } from 'zod';
import { collectStatus, type SyncStatusReport } from '../../app/stream-status.js';
import { renderOutboundStatus } from '../../outbound/outbound-status.js';
import { describeError } from '../../util/errors.js';
import { prepareAccounts, withApp } from '../runtime.js';
import type { AppContext } from '../../app/app-context.js';
import type { Logger } from '../../util/logger.js';
import { renderTable } from '../table.js';
import { describeHolder } from '../../state/leases/holder-id.js';

function formatLag(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}

/** The work of `freight-sync status` (options and help in commands/status.ts, loaded only when it runs). */
export async function statusAction(options: { json?: boolean; offline?: boolean }, command: Command): Promise<void> {
  // Every account of the config (or the one --account names), one after the other.
  const { runtimes, multiAccount } = await prepareAccounts(command, { all: true });
  const reports: SyncStatusReport[] = [];
  for (const runtime of runtimes) {
    const report = await withApp(runtime, { withConnectors: false }, (app) => accountStatus(app, options, runtime.logger));
    if (!options.json) {
      const heading = multiAccount ? `${reports.length > 0 ? '\n' : ''}=== account ${report.account} ===\n` : '';
      process.stdout.write(heading + renderStatus(report));
    }
    reports.push(report);
  }
  if (options.json) process.stdout.write(`${JSON.stringify(multiAccount ? { accounts: reports } : reports[0], null, 2)}\n`);
}

/** One account's status; the server clock is read first unless --offline (or the account is reauth_required). */
async function accountStatus(app: AppContext, options: { offline?: boolean }, logger: Logger): Promise<SyncStatusReport> {
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
      logger.warn(`could not read the server clock (${describeError(error)}); lag is measured against the local clock`);
    }
  }
  return collectStatus(app, serverNow);
}

/** The text form of one account's status. */
function renderStatus(report: SyncStatusReport): string {
  let out = '';
  const rows = report.streams.map((s) => [
    s.stream,
    s.enabled ? 'yes' : 'no',
    s.checkpoint ?? '-',
    s.inProgress ? 'reading' : s.checkpoint ? 'idle' : 'new',
    formatLag(s.lagSeconds),
    s.lateWriteCover ?? '-',
    s.lastRun ? `${s.lastRun.status} ${s.lastRun.startedAt}` : '-',
    s.recordsKnown,
    s.rejected,
    s.lastRun?.error ? s.lastRun.error.slice(0, 80) : '',
  ]);
  if (report.auth.reauthRequired) {
    out +=
      `REAUTH REQUIRED: account ${report.auth.account} since ${report.auth.reauthRequired.since}: ${report.auth.reauthRequired.reason}\n` +
        'API work for this account is paused. Give new credentials in api.auth (a new token pair, or clientId/clientSecret), then run `freight-sync check` and restart the daemon.\n\n';
  }
  out += renderLease(report.lease);
  out += renderTable(['stream', 'enabled', 'checkpoint', 'state', `lag (${report.clock})`, 'late writes', 'last run', 'records', 'rejected', 'last error'], rows);
  const underLag = report.streams.filter((s) => s.enabled && s.lateWriteCover === 'lag').map((s) => s.stream);
  if (underLag.length > 0) {
    out += `\nlate writes "lag" (${underLag.join(', ')}): polling reads each record once, \`lookback\` later than the safety lag alone, so their lag is that much larger by design (lateWriteCover)\n`;
  }
  const quarantined = report.streams.reduce((n, s) => n + s.rejected, 0) + report.rejectedWebhookEvents;
  if (quarantined > 0) out += `\n${quarantined} quarantined entr${quarantined === 1 ? 'y' : 'ies'} (webhook events: ${report.rejectedWebhookEvents}): freight-sync rejected list\n`;
  out += `\ninvoices not yet FULL_PAID (followed through their loads' changes): ${report.invoices.open}; loads awaiting invoice gap-fill: ${report.invoices.gapFillCandidates}\n`;
  out += renderOutboundStatus(report.outbound);
  return out;
}

/** Who works the account: `run`, or a `sync`/`backfill` run by hand, and who waits for it. */
function renderLease(lease: SyncStatusReport['lease']): string {
  if (!lease) return 'no daemon holds the account\'s lease now\n\n';
  let out = `worked by ${describeHolder(lease.holder, lease.command)} (holder ${lease.holder}, lease epoch ${lease.epoch}, held until ${lease.expiresAt})\n`;
  if (lease.request) out += `${describeHolder(lease.request.by, lease.request.command)} is waiting for it to hand the account over (asked until ${lease.request.expiresAt})\n`;
  return `${out}\n`;
}
