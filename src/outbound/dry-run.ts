import type { ApiVariant } from '../api/variant.js';
import type { DryRunResult, InboundUnit } from '../contracts/index.js';
import type { StateStores } from '../state/stores/index.js';
import { rehearse } from '../state/stores/rehearse.js';
import type { OutboxRow } from '../state/tables.js';
import { describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { dryRunResultOf } from './dry-run-outcome.js';
import type { InboundEntry } from '../state/stores/unit-store.js';
import { Intake, type NamedSource, type UnitIntake } from './intake.js';

/** One request as `push --dry-run` reports it. */
export interface DryRunRequest extends DryRunResult {
  source: string;
  unitId: string;
  location: string;
  /** As the ERP wrote them (absent when the row has none). */
  erpKey: string | null;
  kind: string | null;
}

export interface DryRunSummary {
  units: number;
  /** Units already stored by an earlier push (taken before a crash): their outcome is the stored one. */
  unitsAlreadyKnown: number;
  requests: number;
  /** Requests a real push would accept. */
  ok: number;
  /** Requests a real push would reject (or that share an earlier command's failure). */
  failed: number;
  /** `source: message` for each source that could not be read or cannot be dry-run. */
  sourceErrors: string[];
  /** Units whose outcomes were put where the ERP sees them (`<file>.dry-run.result.csv`). */
  unitsWrittenBack: number;
  results: DryRunRequest[];
  durationMs: number;
}

export interface DryRunDeps {
  stores: StateStores;
  sources: readonly NamedSource[];
  variant: ApiVariant;
  logger: Logger;
}

interface PeekedUnit {
  source: string;
  unit: InboundUnit;
}

function text(value: unknown): string | null {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : null;
}

/**
 * `push --dry-run`: what a push would do now, with nothing sent, taken or stored. Every source is
 * read with `peek` (no file moved, no row claimed); then the REAL intake — the same parsing,
 * validation, customer resolution and duplicate rules as `push` — runs on every unit inside a
 * state transaction that is rolled back (`rehearse`), so its errors are the push's errors, and a
 * create in one file still satisfies a `load_erp_key` in the next. No API call is made and no
 * outbox row survives. Outcomes go back through the source's `writeDryRun` where it has one.
 */
export async function runDryRun(deps: DryRunDeps, signal: AbortSignal): Promise<DryRunSummary> {
  const started = Date.now();
  const sourceErrors: string[] = [];
  const peeked: PeekedUnit[] = [];
  // Read everything first: the rehearsal holds the state database's write lock, never during I/O to a source.
  for (const { name, source } of deps.sources) {
    if (!source.peek) {
      sourceErrors.push(`${name}: cannot be dry-run (its connector has no way to read commands without taking them)`);
      continue;
    }
    try {
      for (const unit of await source.peek(signal)) peeked.push({ source: name, unit });
    } catch (error) {
      if (signal.aborted) throw error;
      sourceErrors.push(`${name}: ${describeError(error)}`);
      deps.logger.error({ source: name, err: error }, `reading commands from ${name} failed`);
    }
  }

  const checkedAt = new Date().toISOString();
  const { results, known } = await rehearse(deps.stores, async (stores) => {
    const intake = new Intake({ stores, variant: deps.variant, logger: deps.logger });
    const stored: Array<PeekedUnit & { intake: UnitIntake }> = [];
    for (const { source, unit } of peeked) {
      signal.throwIfAborted();
      stored.push({ source, unit, intake: await intake.store(source, unit) });
    }
    const out: DryRunRequest[] = [];
    const rehearsed = new Set<number>();
    const perUnit: Array<PeekedUnit & { entries: InboundEntry[] }> = [];
    for (const { source, unit, intake: summary } of stored) {
      const entries = await stores.units.entries(source, unit.id);
      // A unit stored before this run keeps its real commands; only a new unit's fresh entries are rehearsal rows.
      if (!summary.known) for (const e of entries) if (e.outboxId !== null && e.note === null) rehearsed.add(e.outboxId);
      perUnit.push({ source, unit, entries });
    }
    const ids = [...new Set(perUnit.flatMap((u) => u.entries.map((e) => e.outboxId).filter((id): id is number => id !== null)))];
    const rows = new Map<number, OutboxRow>((await stores.outbox.byIds(ids)).map((r) => [r.id, r]));
    for (const { source, unit, entries } of perUnit) {
      const fields = new Map(unit.requests.map((r) => [r.ref, r.fields]));
      for (const entry of entries) {
        const raw = fields.get(entry.ref) ?? {};
        out.push({
          source,
          unitId: unit.id,
          location: unit.location,
          erpKey: text(raw['erp_key']),
          kind: text(raw['kind']),
          ...dryRunResultOf(entry, { rows, rehearsed, checkedAt }),
        });
      }
    }
    return { results: out, known: stored.filter((s) => s.intake.known).length };
  });

  let unitsWrittenBack = 0;
  for (const { source: name, unit } of peeked) {
    const source = deps.sources.find((s) => s.name === name)!.source;
    if (!source.writeDryRun) continue;
    const mine = results.filter((r) => r.source === name && r.unitId === unit.id);
    try {
      await source.writeDryRun(
        unit.id,
        mine.map(({ source: _s, unitId: _u, location: _l, erpKey: _e, kind: _k, ...result }) => result),
        signal,
      );
      unitsWrittenBack += 1;
    } catch (error) {
      if (signal.aborted) throw error;
      sourceErrors.push(`${name}: writing the dry-run results of ${unit.location} failed: ${describeError(error)}`);
    }
  }

  const failed = results.filter((r) => r.status === 'failed').length;
  return {
    units: peeked.length,
    unitsAlreadyKnown: known,
    requests: results.length,
    ok: results.length - failed,
    failed,
    sourceErrors,
    unitsWrittenBack,
    results,
    durationMs: Date.now() - started,
  };
}
