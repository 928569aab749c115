import { randomInt } from 'node:crypto';

export type ChaosVariant = 'main' | 'brokerage';

/** What one chaos scenario does. Every random choice derives from `seed`, printed at the start. */
export interface ChaosOptions {
  readonly label: string;
  readonly seed: number;
  readonly variant: ChaosVariant;
  /** SIGKILLs of the daemon before the final pass. */
  readonly kills: number;
  /**
   * A quarter of the kills land during start-up (this many ms after spawn, uniformly in [min, max]
   * of the first half); the rest this long after the daemon logged "daemon running".
   */
  readonly killAfterMs: readonly [number, number];
  readonly loads: number;
  /** Outbound creates dropped as inbox files / inserted as staging rows, spread over the kills. */
  readonly inboxCreates: number;
  readonly stagingCreates: number;
  /** The simulator's rate limit (requests per second); the client is configured 1.6 times higher. */
  readonly serverRps: number;
  readonly faultRate: number;
  readonly accessTokenTtlMs: number;
  readonly clockOffsetMs: number;
  readonly ambiguousCreateRate: number;
  /** Daemon log level: debug, so the secret scan reads the most verbose output there is. */
  readonly logLevel: 'debug' | 'info';
}

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name}: expected a number, got "${raw}"`);
  return n;
}

/** CHAOS_SEED fixes the seed; without it a fresh one is drawn (and printed, to replay a failure). */
export function chaosSeed(): number {
  return envNumber('CHAOS_SEED', randomInt(1, 2 ** 31 - 1));
}

/** The form inside `npm test`: a few kills, small data, well under three minutes. */
export function shortChaos(seed: number, variant: ChaosVariant = 'main'): ChaosOptions {
  return {
    label: `short-${variant}`,
    seed,
    variant,
    kills: envNumber('CHAOS_SHORT_KILLS', 4),
    killAfterMs: [200, 4000],
    loads: 600,
    inboxCreates: 24,
    stagingCreates: 16,
    serverRps: 15,
    faultRate: 0.05,
    accessTokenTtlMs: 4000,
    clockOffsetMs: variant === 'main' ? 90_000 : -75_000,
    ambiguousCreateRate: 0.2,
    logLevel: 'debug',
  };
}

/** `npm run chaos`: at least 20 kills per variant, more data. CHAOS_KILLS / CHAOS_LOADS override. */
export function longChaos(seed: number, variant: ChaosVariant): ChaosOptions {
  return {
    label: `long-${variant}`,
    seed,
    variant,
    kills: Math.max(1, envNumber('CHAOS_KILLS', 20)),
    killAfterMs: [200, 8000],
    loads: envNumber('CHAOS_LOADS', 4000),
    inboxCreates: 120,
    stagingCreates: 80,
    serverRps: 20,
    faultRate: 0.06,
    accessTokenTtlMs: 5000,
    clockOffsetMs: variant === 'main' ? 150_000 : -120_000,
    ambiguousCreateRate: 0.2,
    logLevel: 'debug',
  };
}
