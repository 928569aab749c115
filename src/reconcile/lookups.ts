import type { ApiClient } from '../api/api-client.js';
import { listBills } from '../api/endpoints/bills.js';
import { getInvoice } from '../api/endpoints/invoices.js';
import { getLoad, listLoads } from '../api/endpoints/loads.js';
import { ApiError } from '../api/errors.js';
import type { AnyStreamDefinition, RawRecord } from '../sync/stream-definition.js';
import { isBudgetError } from './request-budget.js';

/** A key to look up, with the load reference number an invoice is found by. */
export interface LookupKey {
  readonly key: string;
  readonly loadReference?: string | undefined;
}

export interface LookupResult {
  /** The API's latest version of each key found (a deleted load comes back with `isDeleted`). */
  readonly found: Map<string, RawRecord>;
  /** Keys the API confirms gone (404/410, or absent where a lookup by key is exact). */
  readonly gone: Set<string>;
  /** Keys whose state could not be told, with why. */
  readonly unknown: Map<string, string>;
}

export interface LookupContext {
  readonly client: ApiClient;
  readonly definition: AnyStreamDefinition;
  readonly pageSize: number;
  readonly options: Record<string, unknown>;
  readonly signal: AbortSignal;
}

/**
 * The API's current version of individual records, for keys the period listing did not return
 * (to tell a row the API no longer has from one that moved out of the period) and for repairs.
 * "Gone" is only ever concluded from an answer about that very key (404/410, or a by-key lookup
 * that came back empty), never from a list that may have ignored its filter: a repair turns gone
 * into a tombstone in the ERP.
 */
export async function lookUp(keys: readonly LookupKey[], ctx: LookupContext): Promise<LookupResult> {
  const result: LookupResult = { found: new Map(), gone: new Set(), unknown: new Map() };
  const pending = [...keys];
  try {
    switch (ctx.definition.name) {
      case 'loads':
        await lookUpLoads(pending, ctx, result);
        break;
      case 'bills':
        for (const item of pending) await lookUpBill(item.key, ctx, result);
        break;
      case 'invoices':
        for (const item of pending) await lookUpInvoice(item, ctx, result);
        break;
      default:
        for (const item of pending) result.unknown.set(item.key, `stream ${ctx.definition.name} has no lookup by key`);
    }
  } catch (error) {
    if (!isBudgetError(error)) throw error;
    for (const item of pending) {
      if (!result.found.has(item.key) && !result.gone.has(item.key) && !result.unknown.has(item.key)) result.unknown.set(item.key, 'request budget used up');
    }
  }
  return result;
}

/** Loads: by `reference_numbers` a page at a time; one not returned is asked for on its own. */
async function lookUpLoads(keys: readonly LookupKey[], ctx: LookupContext, result: LookupResult): Promise<void> {
  const { client, options, signal } = ctx;
  const extras = client.variant === 'main' ? { includeChargeSets: options.includeChargeSets === true || undefined, includeVendorPay: options.includeVendorPay === true || undefined } : {};
  const size = Math.max(1, Math.min(ctx.pageSize, 50));
  for (let i = 0; i < keys.length; i += size) {
    const wanted = keys.slice(i, i + size).map((k) => k.key);
    const page = await listLoads(client, { reference_numbers: wanted, isIncludeDeleted: true, limit: size, ...extras }, signal);
    for (const load of page.items as RawRecord[]) {
      const key = ctx.definition.key(load);
      if (wanted.includes(key)) result.found.set(key, load);
    }
    for (const key of wanted) {
      if (result.found.has(key)) continue;
      try {
        result.found.set(key, (await getLoad(client, key, extras, signal)) as RawRecord);
      } catch (error) {
        if (!isGoneError(error)) throw error;
        result.gone.add(key);
      }
    }
  }
}

async function lookUpBill(key: string, ctx: LookupContext, result: LookupResult): Promise<void> {
  const page = await listBills(ctx.client, { billId: key, limit: 10 }, ctx.signal);
  const items = page.items as RawRecord[];
  const match = items.find((bill) => ctx.definition.key(bill) === key);
  if (match) result.found.set(key, match);
  // An empty answer to a lookup by this very id is the API saying it has no such bill; anything
  // else (other bills, the filter ignored) proves nothing.
  else if (items.length === 0) result.gone.add(key);
  else result.unknown.set(key, `GET /bills?billId=${key} returned other bills`);
}

async function lookUpInvoice(item: LookupKey, ctx: LookupContext, result: LookupResult): Promise<void> {
  if (!item.loadReference) {
    result.unknown.set(item.key, 'no load reference number to look the invoice up by (needs _raw or a load_reference column)');
    return;
  }
  try {
    const invoice = (await getInvoice(ctx.client, item.loadReference, { includePaymentHistory: ctx.options.includePaymentHistory !== false }, ctx.signal)) as RawRecord;
    if (ctx.definition.key(invoice) === item.key) result.found.set(item.key, invoice);
    else result.unknown.set(item.key, `load ${item.loadReference}'s invoice is now ${ctx.definition.key(invoice)}`);
  } catch (error) {
    if (!isGoneError(error)) throw error;
    result.gone.add(item.key);
  }
}

function isGoneError(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 404 || error.status === 410);
}
