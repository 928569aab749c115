import type { ApiClient } from '../api/api-client.js';
import type { RecordOp } from '../contracts/index.js';
import type { SyncSideStore } from '../state/stores/sync-side-store.js';
import { cursorPosition } from '../sync/cursor-position.js';
import { invoiceFacts } from '../sync/strategies/invoices.js';
import type { AnyStreamDefinition, RawRecord, RunPlan } from '../sync/stream-definition.js';
import type { Logger } from '../util/logger.js';
import type { MappedView, TextRow } from './mapped-view.js';
import { isBudgetError } from './request-budget.js';

/** One API record of the period, kept small: per sink only the root row that sink would hold. */
export interface ApiEntry {
  readonly key: string;
  readonly op: RecordOp;
  readonly updatedAt: string | null;
  /** Per sink name: the mapped root row as text, or why the record cannot be mapped for it. */
  readonly rows: ReadonlyMap<string, TextRow | { problem: string }>;
  /** Invoices: the load reference number `GET /invoices/<ref>` finds it by. */
  readonly loadReference: string | undefined;
}

export interface Listing {
  readonly entries: Map<string, ApiEntry>;
  /** The period is covered from its start up to here (ISO); null when nothing was listed. */
  readonly listedThrough: string | null;
  readonly complete: boolean;
  readonly notChecked: string[];
  /** Elements that failed the API schema (the sync quarantines them; not compared). */
  readonly rejected: number;
}

export interface ListingContext {
  readonly definition: AnyStreamDefinition;
  /** The budget-guarded client. */
  readonly client: ApiClient;
  readonly side: SyncSideStore;
  readonly logger: Logger;
  readonly pageSize: number;
  readonly options: Record<string, unknown>;
  readonly views: ReadonlyMap<string, MappedView>;
  /** The delivery hook the engine applies before mapping (echo marks on loads), so rows compare alike. */
  readonly enrich: (stream: string, records: readonly RawRecord[]) => Promise<RawRecord[]>;
  readonly signal: AbortSignal;
}

const SYNCED_AT = new Date(0).toISOString();

/**
 * Lists the API's records of the period with the stream's own reader in backfill mode (the same
 * windows, stability checks and filters the sync uses; nothing is committed), mapping each one
 * through every sink's mapping. When the request budget runs out the listing stops and says how
 * far it got.
 */
export async function listPeriod(ctx: ListingContext, plan: RunPlan): Promise<Listing> {
  const { definition } = ctx;
  const entries = new Map<string, ApiEntry>();
  let listedThrough: string | null = null;
  let rejected = 0;
  const env = { client: ctx.client, variant: ctx.client.variant, pageSize: ctx.pageSize, options: ctx.options, logger: ctx.logger, side: ctx.side };
  try {
    for await (const chunk of definition.read(env, undefined, plan, ctx.signal)) {
      rejected += chunk.rejected.length;
      for (const entry of await toEntries(ctx, chunk.records)) entries.set(entry.key, entry);
      listedThrough = cursorPosition(chunk.cursor) ?? listedThrough;
    }
  } catch (error) {
    if (!isBudgetError(error)) throw error;
    const from = listedThrough ?? plan.from ?? null;
    return {
      entries,
      listedThrough,
      complete: false,
      notChecked: [`request budget used up while listing ${definition.name}: API records after ${from ?? 'the period start'} (up to ${plan.to}) were not listed; sink rows in that range are reported unchecked`],
      rejected,
    };
  }
  return { entries, listedThrough: plan.to ?? listedThrough, complete: true, notChecked: [], rejected };
}

/** API records (listed or looked up) as entries; a record without a key is skipped (the sync quarantines it). */
export async function toEntries(ctx: Pick<ListingContext, 'definition' | 'views' | 'enrich' | 'logger'>, records: readonly RawRecord[]): Promise<ApiEntry[]> {
  const { definition } = ctx;
  const out: ApiEntry[] = [];
  for (const data of await ctx.enrich(definition.name, records)) {
    let key: string;
    try {
      key = definition.key(data);
    } catch (error) {
      ctx.logger.debug({ err: error, stream: definition.name }, 'reconcile: API record without a key skipped');
      continue;
    }
    const op = definition.op(data);
    const updatedAt = definition.updatedAt(data);
    const record = { stream: definition.name, key, op, updatedAt, data, syncedAt: SYNCED_AT };
    const rows = new Map([...ctx.views].map(([sink, view]) => [sink, view.mapRecord(record)] as const));
    const loadReference = definition.name === 'invoices' ? invoiceFacts(data).loadReferenceNumbers[0] : undefined;
    out.push({ key, op, updatedAt, rows, loadReference });
  }
  return out;
}
