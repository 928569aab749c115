import { maxPageSize } from '../api/page-size.js';
import { STREAM_NAMES } from '../config/stream-names.js';
import type { FreightSyncConfig, StreamConfig } from '../config/types.js';
import { formatZodIssues } from '../config/format-issues.js';
import { ConfigError } from '../util/errors.js';
import type { AnyStreamDefinition, RunPlan, StreamName } from '../sync/stream-definition.js';
import { streamByName } from '../sync/streams/index.js';

/** A stream ready to run: its definition, validated options and page size, and its sinks. */
export interface ResolvedStream {
  definition: AnyStreamDefinition;
  settings: StreamConfig;
  options: Record<string, unknown>;
  pageSize: number;
  sinks: string[];
  /** Late writes are covered by the safety lag rather than the lookback (lateWriteCover, coverByLag). */
  lagCover: boolean;
}

/**
 * Whether a stream's late writes are covered by the safety lag (each record read once, polled
 * changes delivered `lookback` later) rather than by re-reading the lookback every pass. `auto`
 * chooses the lag for the loads stream when webhooks are on: load events bring its changes in
 * seconds and polling is the safety net, so the lookback's re-reads — half of a busy account's
 * `GET /loads` requests (issue 14: 2.0 times the minimum a pass) — buy nothing a user sees.
 * Customers, consignees, bills and support moves have no webhook events (spec §6.3): polling is
 * their only path, kept prompt. Invoices, which have events, follow their own rules (billing
 * windows and the loads change feed, strategies/invoices.ts) and keep the lookback there.
 */
export function coverByLag(name: StreamName, settings: StreamConfig, webhooksEnabled: boolean): boolean {
  if (settings.lateWriteCover === 'auto') return name === 'loads' && webhooksEnabled;
  return settings.lateWriteCover === 'lag';
}

/**
 * What covers a stream's late writes, as `status` shows it: null where the question does not
 * arise — append-only logs by createdAt (the safety lag alone), snapshots, webhook push — or the
 * stream keeps its own rules (invoices: billing windows and the loads change feed).
 */
export function lateWriteCoverShown(name: StreamName, settings: StreamConfig, webhooksEnabled: boolean): 'lag' | 'lookback' | null {
  const definition = streamByName(name);
  if (!definition.cursorKind.startsWith('updatedAt')) return null;
  return coverByLag(name, settings, webhooksEnabled) ? 'lag' : 'lookback';
}

/** How far behind the server clock a stream's ranges end: the safety lag, plus the lookback under the lag's cover. */
export function effectiveSafetyLagMs(stream: Pick<ResolvedStream, 'settings' | 'lagCover'>): number {
  return stream.settings.safetyLag + (stream.lagCover ? stream.settings.lookback : 0);
}

/**
 * Resolves the enabled streams of the config against their definitions. Errors name the config
 * path: a stream the variant does not have, options the stream does not know, a page size over
 * the endpoint's maximum (spec §8: exceeding it is an error on the server, not a clamp).
 */
export function resolveStreams(config: FreightSyncConfig, only?: readonly string[]): ResolvedStream[] {
  const { resolved, issues } = checkStreams(config, only);
  if (issues.length > 0) throw new ConfigError(issues);
  return resolved;
}

/** resolveStreams without the throw: the streams that resolved, and every problem of the others. */
export function checkStreams(config: FreightSyncConfig, only?: readonly string[]): { resolved: ResolvedStream[]; issues: string[] } {
  const issues: string[] = [];
  const resolved: ResolvedStream[] = [];
  const variant = config.api.variant;
  if (only) {
    for (const name of only) {
      if (!config.sync.streams[name as StreamName]) issues.push(`--stream ${name}: not configured under sync.streams`);
    }
  }
  // In run order (config/stream-names.ts), whatever order the config file lists them in.
  for (const name of STREAM_NAMES) {
    const settings = config.sync.streams[name];
    if (!settings || !settings.enabled) continue;
    if (only && !only.includes(name)) continue;
    const at = `sync.streams.${name}`;
    const definition = streamByName(name);
    if (!definition.variants.includes(variant)) {
      issues.push(`${at}: the ${name} stream is not available on the ${variant} variant (only ${definition.variants.join(', ')})`);
      continue;
    }
    const parsed = definition.optionsSchema.safeParse(settings.options ?? {});
    if (!parsed.success) {
      issues.push(...formatZodIssues(parsed.error, ['sync', 'streams', name, 'options'], { schema: definition.optionsSchema, input: settings.options }));
      continue;
    }
    if (definition.pagedEndpoint) {
      const max = maxPageSize(variant, definition.pagedEndpoint);
      if (settings.pageSize > max) {
        issues.push(`${at}.pageSize: ${settings.pageSize} is over the maximum page size ${max} of this endpoint on ${variant}`);
        continue;
      }
    }
    resolved.push({
      definition,
      settings,
      options: parsed.data as Record<string, unknown>,
      pageSize: settings.pageSize,
      sinks: settings.sinks,
      lagCover: coverByLag(name, settings, config.webhooks.enabled),
    });
  }
  return { resolved, issues };
}

export function incrementalPlan(stream: Pick<ResolvedStream, 'settings' | 'lagCover'>): RunPlan {
  const settings = stream.settings;
  return {
    mode: 'incremental',
    lookbackMs: settings.lookback,
    safetyLagMs: settings.safetyLag,
    lagCover: stream.lagCover,
    initialFrom: settings.initialFrom,
    maxWindowMs: settings.maxWindow,
    minWindowMs: settings.minWindow,
  };
}

export function backfillPlan(stream: Pick<ResolvedStream, 'settings' | 'lagCover'>, from: string, to: string): RunPlan {
  return { ...incrementalPlan(stream), mode: 'backfill', from, to, lookbackMs: 0 };
}
