import type { ApiClient } from '../api/api-client.js';
import type { ApiVariant } from '../api/variant.js';
import type { OutboundConfig } from '../config/types.js';
import type { CommandSource } from '../contracts/index.js';
import type { StateStores } from '../state/stores/index.js';
import { sleep } from '../util/abort.js';
import { UsageError, describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { CommandRunner } from './command-runner.js';
import type { DispatchLease } from './dispatch-lease.js';
import { Dispatcher } from './dispatcher.js';
import { Intake, type NamedSource, type UnitIntake } from './intake.js';
import type { OutboxStore } from '../state/stores/outbox-store.js';
import { WriteBack } from './write-back.js';

export interface OutboundEngine {
  readonly sources: readonly NamedSource[];
  readonly intake: Intake;
  readonly dispatcher: Dispatcher;
  readonly writeBack: WriteBack;
  readonly lease: DispatchLease;
  readonly outbox: OutboxStore;
  /**
   * Takes every unit of every source once (a failing source is logged; the others still run).
   * `settle`: a source that had nothing is asked once more after this many ms — file inboxes
   * only hand over a file seen unchanged by two consecutive listings (`push` uses it).
   */
  poll(signal: AbortSignal, options?: { settleMs?: number }): Promise<PollResult>;
}

export interface PollResult {
  units: UnitIntake[];
  /** `source: message` for each source whose take failed. */
  sourceErrors: string[];
}

/**
 * The connectors named in `outbound.sources`, each with its source capability (`connectorSource`
 * looks a connector up by name). `extra` lets tests add in-memory sources.
 */
export function outboundSources(
  names: readonly string[],
  connectorSource: (name: string) => { exists: boolean; source: CommandSource | undefined },
  extra: readonly NamedSource[] = [],
): NamedSource[] {
  const out: NamedSource[] = [...extra];
  names.forEach((name, index) => {
    if (out.some((s) => s.name === name)) return;
    const found = connectorSource(name);
    if (!found.source) {
      throw new UsageError(
        `outbound.sources[${index}]: connector ${name} ${found.exists ? 'cannot supply commands (no source capability)' : 'was not created (is it defined under connectors?)'}`,
      );
    }
    out.push({ name, source: found.source });
  });
  return out;
}

export interface OutboundEngineDeps {
  stores: Pick<StateStores, 'outbox' | 'units' | 'directory' | 'transaction'>;
  /** The shared API client: same rate budget and tokens as the pull side. */
  client: ApiClient;
  /** The API request timeout (`api.timeout`): commands a previous process left in flight wait it out before their look-up. */
  requestTimeoutMs?: number;
  sources: readonly NamedSource[];
  config: OutboundConfig;
  variant: ApiVariant;
  /** One dispatcher per state database (created by the composition root). */
  lease: DispatchLease;
  logger: Logger;
  /** Aborts in-flight write-backs (second SIGTERM). */
  abortSignal: AbortSignal;
  /** How many failures in a row the dispatch loop survives, and its pauses (see DispatcherSettings). */
  supervision?: { maxConsecutiveFailures?: number; failurePauseMs?: { base: number; max: number } };
}

/**
 * The outbound side from narrow dependencies: intake from the sources, the dispatcher, write-back
 * and the dispatch lease. Built by the composition root (src/app/compose.ts).
 */
export function createOutboundEngine(deps: OutboundEngineDeps): OutboundEngine {
  const { logger, config, sources, stores } = deps;
  const intake = new Intake({ stores, variant: deps.variant, logger });
  const sourceMap = new Map<string, CommandSource>(sources.map((s) => [s.name, s.source]));
  const writeBack = new WriteBack(stores, sourceMap, logger, deps.abortSignal);
  const runner = new CommandRunner(deps.client, stores.outbox, {
    reconcileBy: config.reconcileBy,
    setSecondaryReferenceNo: config.setSecondaryReferenceNo,
    maxAttempts: config.maxAttempts,
  }, stores.directory);
  const dispatcher = new Dispatcher(
    stores.outbox,
    runner,
    {
      concurrency: config.concurrency,
      maxAttempts: config.maxAttempts,
      backoff: config.backoff,
      reconcileDelay: config.reconcileDelay,
      ...(deps.requestTimeoutMs !== undefined ? { recoverDelay: deps.requestTimeoutMs } : {}),
      ...deps.supervision,
      // A reauth_required account sends nothing: its commands wait without using attempts.
      paused: async () => {
        const mark = await deps.client.tokens.reauthRequired();
        return mark ? `account ${deps.client.tokens.account} is reauth_required since ${mark.since}: ${mark.reason}` : undefined;
      },
    },
    logger,
    // Not awaited: the load's next command need not wait for a write-back (sweeps catch up).
    async (ids) => void writeBack.forCommands(ids).catch((error: unknown) => logger.error({ err: error }, 'write-back failed')),
  );
  const lease = deps.lease;
  const outbox = stores.outbox;
  return {
    sources,
    intake,
    dispatcher,
    writeBack,
    lease,
    outbox,
    async poll(signal, pollOptions = {}) {
      const units: UnitIntake[] = [];
      const sourceErrors: string[] = [];
      for (const source of sources) {
        try {
          let taken = await intake.takeFrom(source, signal);
          if (taken.length === 0 && pollOptions.settleMs !== undefined) {
            await sleep(pollOptions.settleMs, signal);
            taken = await intake.takeFrom(source, signal);
          }
          units.push(...taken);
        } catch (error) {
          if (signal.aborted) throw error;
          sourceErrors.push(`${source.name}: ${describeError(error)}`);
          logger.error({ source: source.name, err: error }, `taking commands from ${source.name} failed`);
        }
      }
      if (units.some((u) => u.commands > 0)) dispatcher.notify();
      await writeBack.sweep();
      return { units, sourceErrors };
    },
  };
}
