import type { AppContext } from '../app/app-context.js';
import type { CommandSource } from '../contracts/index.js';
import { sleep } from '../util/abort.js';
import { UsageError, describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { CommandRunner } from './command-runner.js';
import { CustomerDirectoryStore } from '../state/stores/customer-directory-store.js';
import { DispatchLease } from './dispatch-lease.js';
import { Dispatcher } from './dispatcher.js';
import { Intake, type NamedSource, type UnitIntake } from './intake.js';
import { OutboxStore } from '../state/stores/outbox-store.js';
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

/** The connectors named in `outbound.sources`, each with its source capability. */
export function outboundSources(app: AppContext, extra: readonly NamedSource[] = []): NamedSource[] {
  const out: NamedSource[] = [...extra];
  app.config.outbound.sources.forEach((name, index) => {
    if (out.some((s) => s.name === name)) return;
    const handle = app.connectors?.get(name);
    const source = handle?.instance.source;
    if (!source) {
      throw new UsageError(
        `outbound.sources[${index}]: connector ${name} ${handle ? 'cannot supply commands (no source capability)' : 'was not created (is it defined under connectors?)'}`,
      );
    }
    out.push({ name, source });
  });
  return out;
}

/**
 * The outbound side wired from the app (composition root for src/outbound): intake from the
 * sources, the dispatcher on the app's shared ApiClient (same rate budget as the pull side),
 * write-back, and the dispatch lease. `extraSources` lets tests add in-memory sources.
 */
export function createOutboundEngine(app: AppContext, options: { abortSignal: AbortSignal; logger?: Logger; extraSources?: readonly NamedSource[] }): OutboundEngine {
  const logger = options.logger ?? app.logger.child({ component: 'outbound' });
  const config = app.config.outbound;
  const sources = outboundSources(app, options.extraSources);
  const outbox = new OutboxStore(app.db);
  const directory = new CustomerDirectoryStore(app.db);
  const intake = new Intake({ db: app.db, directory, variant: app.config.api.variant, logger });
  const sourceMap = new Map<string, CommandSource>(sources.map((s) => [s.name, s.source]));
  const writeBack = new WriteBack(app.db, sourceMap, logger, options.abortSignal);
  const runner = new CommandRunner(app.client, outbox, {
    reconcileBy: config.reconcileBy,
    setSecondaryReferenceNo: config.setSecondaryReferenceNo,
    maxAttempts: config.maxAttempts,
  });
  const dispatcher = new Dispatcher(
    outbox,
    runner,
    { concurrency: config.concurrency, maxAttempts: config.maxAttempts, backoff: config.backoff, reconcileDelay: config.reconcileDelay },
    logger,
    // Not awaited: the load's next command need not wait for a write-back (sweeps catch up).
    async (ids) => void writeBack.forCommands(ids).catch((error: unknown) => logger.error({ err: error }, 'write-back failed')),
  );
  const lease = new DispatchLease(app.db, app.config.state.path);
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
