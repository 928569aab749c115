import { formatIsoDuration } from '../util/duration.js';
import type { ResolvedStream } from './stream-settings.js';

export interface ReadyFacts {
  streams: readonly ResolvedStream[];
  /** Bound HTTP servers with their routes (ops endpoints, webhook receiver). */
  listening: ReadonlyArray<{ url: string; paths: readonly string[] }>;
  /** Each polled stream's next cron tick. */
  ticks: ReadonlyArray<{ stream: string; at: Date | null }>;
  runOnStart: boolean;
  outbound: { sources: readonly string[]; pollIntervalMs: number } | null;
  /** Set when another replica holds the account's work: said instead of the first pass. */
  standby?: string;
}

/**
 * The one line `run` logs once every service is up: what it listens on, when the first pass
 * runs and which streams it syncs, so an operator (or a container log) sees at a glance that the
 * daemon is ready and what it will do. Everything is in the message and nothing in extra fields,
 * so it stays one line in the pretty (TTY) format too.
 */
export function readyLine(facts: ReadyFacts): string {
  const polled = facts.streams.filter((s) => !s.definition.pushOnly);
  const pushed = facts.streams.filter((s) => s.definition.pushOnly).map((s) => s.definition.name);
  const streams = [...polled.map((s) => s.definition.name), ...pushed.map((name) => `${name} (webhook push)`)];

  const next = facts.ticks.filter((t) => t.at !== null).sort((a, b) => a.at!.getTime() - b.at!.getTime())[0];
  const firstPass = facts.standby
    ? facts.standby
    : polled.length === 0 ? 'no polled stream' : facts.runOnStart ? 'first pass now' : next ? `first pass at ${next.at!.toISOString()} (${next.stream})` : 'first pass at each stream\'s first cron tick';
  const listening =
    facts.listening.length === 0 ? 'no HTTP listener' : `listening on ${facts.listening.map((l) => `${l.url} (${l.paths.join(' ')})`).join(', ')}`;
  const outbound = facts.outbound ? `; outbound polls ${facts.outbound.sources.join(', ') || 'no source'} every ${formatIsoDuration(facts.outbound.pollIntervalMs)}` : '';

  return `daemon running: ${streams.length} stream${streams.length === 1 ? '' : 's'} (${streams.join(', ')}); ${firstPass}; ${listening}${outbound}`;
}

/**
 * The ready line of a deployment of several accounts: which this replica works and which it
 * stands by for, and what it listens on (each account's streams are in its own log lines).
 */
export function deploymentReadyLine(facts: {
  accounts: readonly string[];
  active: number;
  listening: ReadyFacts['listening'];
  standbyNote: string;
}): string {
  const listening =
    facts.listening.length === 0 ? 'no HTTP listener' : `listening on ${facts.listening.map((l) => `${l.url} (${l.paths.join(' ')})`).join(', ')}`;
  const standby = facts.accounts.length - facts.active;
  return `daemon running: ${facts.accounts.length} accounts, ${facts.active} worked here, ${standby} in standby (${facts.standbyNote}): ${facts.accounts.join(', ')}; ${listening}`;
}
