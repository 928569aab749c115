import { cursorInProgress, cursorPosition } from '../sync/cursor-position.js';
import { LeaseStore, type LeaseRow } from '../state/leases/index.js';
import { dbNowMs } from '../state/db-clock.js';
import type { AppContext } from './app-context.js';
import type { StreamName } from '../config/stream-names.js';
import { lateWriteCoverShown } from './stream-settings.js';
import { collectOutboundStatus, type OutboundStatus } from '../outbound/outbound-status.js';

export interface StreamStatus {
  stream: string;
  enabled: boolean;
  /** Where the stream stands: the end of the last completed range, or the position inside one. */
  checkpoint: string | null;
  /** A range is being read (a run stopped or is running in the middle of it). */
  inProgress: boolean;
  /** Seconds between the checkpoint and the (server) clock. */
  lagSeconds: number | null;
  /**
   * What covers late writes (`lateWriteCover` resolved): `lag` — ranges end `lookback` further
   * behind the clock, so `lagSeconds` is that much larger by design; `lookback` — the last
   * `lookback` is read again each pass; null — the stream needs neither (createdAt logs,
   * snapshots, webhook push) or has its own rules (invoices).
   */
  lateWriteCover: 'lag' | 'lookback' | null;
  lastRun: { startedAt: string; finishedAt: string | null; status: string; records: number; rejected: number; error: string | null } | null;
  /** Distinct keys delivered so far. */
  recordsKnown: number;
  /**
   * Entries of the stream in the quarantine: records the API schema refused and records a sink
   * refused (not yet re-delivered). Not in `recordsKnown`. See `freight-sync rejected list`.
   */
  rejected: number;
}

/** The API account's credentials as the shared state knows them. */
export interface AuthStatus {
  /** The account's key in the token store (variant, base URL and a hash of the configured identity). */
  account: string;
  /** `reauth_required`: its tokens are lost and every process pauses its API work until new credentials are given. */
  state: 'ok' | 'reauth_required';
  reauthRequired: { reason: string; since: string } | null;
}

/** Who works the account (`run`, or a `sync`/`backfill` run by hand, under its lease), as the state knows it; null: nobody holds it now. */
export interface LeaseStatus {
  holder: string;
  /** What the holder is: `run`, `sync`, `backfill`; null for a lease taken by an older version. */
  command: string | null;
  epoch: number;
  /** When the lease runs out unless renewed (database clock). */
  expiresAt: string;
  /** A `sync` or `backfill` waiting for the holder to hand the account over; null when none. */
  request: { by: string; command: string | null; expiresAt: string } | null;
}

export interface SyncStatusReport {
  /** The account's name, in a config with `accounts`. */
  account?: string;
  generatedAt: string;
  clock: 'server' | 'local';
  auth: AuthStatus;
  lease: LeaseStatus | null;
  streams: StreamStatus[];
  invoices: { open: number; gapFillCandidates: number };
  /** Webhook events parked as failed (quarantine streams `webhook:<family>`). */
  rejectedWebhookEvents: number;
  outbound: OutboundStatus;
}

/** Per-stream status from the state database (no API call unless `serverNow` is given). */
export async function collectStatus(app: AppContext, serverNow?: Date): Promise<SyncStatusReport> {
  const now = serverNow ?? new Date();
  const entries = new Map((await app.stores.checkpoints.list()).map((e) => [e.stream, e]));
  const counts = await app.db
    .selectFrom('seen_records')
    .select(['stream', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('stream')
    .execute();
  const known = new Map(counts.map((c) => [c.stream, Number(c.n)]));
  const quarantined = await app.stores.quarantine.counts();
  const streams: StreamStatus[] = [];
  for (const [name, settings] of Object.entries(app.config.sync.streams)) {
    if (!settings) continue;
    const cursor = entries.get(name)?.cursor;
    const position = { at: cursorPosition(cursor), inProgress: cursorInProgress(cursor) };
    const last = await app.stores.runs.last(name);
    const atMs = position.at ? Date.parse(position.at) : NaN;
    streams.push({
      stream: name,
      enabled: settings.enabled,
      checkpoint: position.at,
      inProgress: position.inProgress,
      lagSeconds: Number.isNaN(atMs) ? null : Math.max(0, Math.round((now.getTime() - atMs) / 1000)),
      lateWriteCover: lateWriteCoverShown(name as StreamName, settings, app.config.webhooks.enabled),
      lastRun: last
        ? { startedAt: last.startedAt, finishedAt: last.finishedAt, status: last.status, records: last.records, rejected: last.rejected, error: last.error }
        : null,
      recordsKnown: known.get(name) ?? 0,
      rejected: quarantined.filter((q) => q.stream === name).reduce((n, q) => n + q.count, 0),
    });
  }
  const mark = await app.client.tokens.reauthRequired();
  const held = await app.account.leases.row(app.account.leaseKey);
  const dbNow = await dbNowMs(app.db);
  return {
    generatedAt: now.toISOString(),
    clock: serverNow ? 'server' : 'local',
    ...(app.account.name === undefined ? {} : { account: app.account.name }),
    auth: {
      account: app.client.tokens.account,
      state: mark ? 'reauth_required' : 'ok',
      reauthRequired: mark ? { reason: mark.reason, since: mark.since } : null,
    },
    lease: held?.holder && held.expiresAtMs > dbNow ? leaseStatus(held) : null,
    streams,
    invoices: { open: await app.stores.side.countOpenInvoices(), gapFillCandidates: await app.stores.side.countInvoiceCandidates() },
    rejectedWebhookEvents: quarantined.filter((q) => q.kind === 'webhook').reduce((n, q) => n + q.count, 0),
    outbound: await collectOutboundStatus(app.stores),
  };
}

function leaseStatus(row: LeaseRow): LeaseStatus {
  const { request } = row;
  return {
    holder: row.holder!,
    command: row.holderCommand,
    epoch: row.epoch,
    expiresAt: new Date(row.expiresAtMs).toISOString(),
    request: request ? { by: request.by, command: request.command, expiresAt: new Date(request.expiresAtMs).toISOString() } : null,
  };
}
