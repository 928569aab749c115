import type { ConfigurePatch, SimulatorOptions } from './options.js';
import type { SimulatorStats } from './stats.js';
import type { TruthResource } from './truth.js';

export interface SimulatorHandle {
  /** e.g. http://127.0.0.1:PORT/v1 */
  readonly baseUrl: string;
  /** e.g. http://127.0.0.1:PORT/__admin */
  readonly adminUrl: string;
  readonly options: SimulatorOptions;
  /** Server clock (real time + clockOffsetMs). */
  now(): Date;
  stats(): SimulatorStats;
  resetStats(): void;
  /** Change knobs at run time. */
  configure(patch: ConfigurePatch): void;
  /** Runs `count` mutator steps now (deterministic tests). */
  mutate(count: number): Promise<void>;
  /** Every current record, incl. deleted loads, streamed. */
  truth(resource: TruthResource): AsyncIterable<Record<string, unknown>>;
  /** Simulates a refresh token revoked out of band. */
  revokeRefreshTokens(): void;
  close(): Promise<void>;
}
