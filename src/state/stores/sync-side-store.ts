import type { Kysely } from 'kysely';
import type { StateTables } from '../tables.js';
import { DocumentFileStore } from './document-file-store.js';
import { StatementTexts } from './statement-texts.js';


/** A load read by the invoices change feed: its updatedAt and the signature of its billing fields. */
export interface FeedLoad {
  ref: string;
  updatedAt: string;
  signature?: string | null;
}

export interface OpenInvoice {
  invoiceId: string;
  status: string | null;
  billingDate: string | null;
  loadReferenceNumbers: string[];
}

/** Kinds of invoice (spec §4.2): a load's own, one billed to a sub-customer, one combining several loads. */
export type InvoiceKind = 'primary' | 'subCustomer' | 'combined';

export interface InvoiceFacts {
  /** The invoice's record key (unique across kinds). */
  invoiceId: string;
  kind: InvoiceKind;
  status: string | null;
  billingDate: string | null;
  deleted: boolean;
  loadReferenceNumbers: string[];
}

/** An invoice known to cover a load. */
export interface LinkedInvoice {
  invoiceId: string;
  kind: InvoiceKind;
  deleted: boolean;
}

export interface InvoiceCandidate {
  loadReferenceNumber: string;
  reason: string;
  attempts: number;
}

/** Invoice status after which an invoice no longer changes by payment (spec §3.2). */
export const FINAL_INVOICE_STATUSES: ReadonlySet<string> = new Set(['FULL_PAID']);

const IN_CHUNK = 500;

/**
 * Engine state beyond cursors (see migration 0002). Every method takes the executor it runs on,
 * so the runner can put the bookkeeping of a batch in the same transaction as its checkpoint.
 */
export class SyncSideStore {
  constructor(
    readonly db: Kysely<StateTables>,
    private readonly now: () => Date = () => new Date(),
    /** Shared by every store of one database (see StatementTexts). */
    private readonly texts: StatementTexts = new StatementTexts(),
  ) {}

  /** The same tables on an open transaction. */
  on(executor: Kysely<StateTables>): SyncSideStore {
    return new SyncSideStore(executor, this.now, this.texts);
  }

  /** Stored load documents (documentFiles stream), on the same executor. */
  documents(): DocumentFileStore {
    return new DocumentFileStore(this.db, this.now);
  }

  async recordInvoices(invoices: readonly InvoiceFacts[]): Promise<void> {
    const at = this.now().toISOString();
    for (const invoice of invoices) {
      const values = {
        status: invoice.status,
        billing_date: invoice.billingDate,
        is_final: invoice.deleted || (invoice.status && FINAL_INVOICE_STATUSES.has(invoice.status)) ? 1 : 0,
        updated_at: at,
        kind: invoice.kind,
        is_deleted: invoice.deleted ? 1 : 0,
      };
      await this.db
        .insertInto('invoice_index')
        .values({ invoice_id: invoice.invoiceId, ...values })
        .onConflict((oc) => oc.column('invoice_id').doUpdateSet(values))
        .execute();
      for (const ref of invoice.loadReferenceNumbers) {
        await this.db
          .insertInto('invoice_links')
          .values({ load_reference_number: ref, invoice_id: invoice.invoiceId })
          .onConflict((oc) => oc.columns(['load_reference_number', 'invoice_id']).doNothing())
          .execute();
      }
      // A live primary or combined invoice is what a candidate waited for.
      if (invoice.loadReferenceNumbers.length > 0 && !invoice.deleted && invoice.kind !== 'subCustomer') {
        await this.db.deleteFrom('invoice_candidates').where('load_reference_number', 'in', invoice.loadReferenceNumbers).execute();
      }
    }
  }

  /** Invoices not yet final, oldest billing date first. */
  async openInvoices(limit: number, after?: { billingDate: string; invoiceId: string }): Promise<OpenInvoice[]> {
    let query = this.db
      .selectFrom('invoice_index')
      .select(['invoice_id', 'status', 'billing_date'])
      .where('is_final', '=', 0);
    if (after) {
      query = query.where((eb) =>
        eb.or([
          eb('billing_date', '>', after.billingDate),
          eb.and([eb('billing_date', '=', after.billingDate), eb('invoice_id', '>', after.invoiceId)]),
        ]),
      );
    }
    const rows = await query
      .orderBy('billing_date')
      .orderBy('invoice_id')
      .limit(limit)
      .execute();
    if (rows.length === 0) return [];
    const links = await this.db
      .selectFrom('invoice_links')
      .select(['load_reference_number', 'invoice_id'])
      .where(
        'invoice_id',
        'in',
        rows.map((r) => r.invoice_id),
      )
      .execute();
    return rows.map((row) => ({
      invoiceId: row.invoice_id,
      status: row.status,
      billingDate: row.billing_date,
      loadReferenceNumbers: links.filter((l) => l.invoice_id === row.invoice_id).map((l) => l.load_reference_number),
    }));
  }

  async countOpenInvoices(): Promise<number> {
    const row = await this.db.selectFrom('invoice_index').select((eb) => eb.fn.countAll<number>().as('n')).where('is_final', '=', 0).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Every invoice known to cover each of the loads (loads without one are absent). */
  async invoicesOfLoads(loadReferenceNumbers: readonly string[]): Promise<Map<string, LinkedInvoice[]>> {
    const out = new Map<string, LinkedInvoice[]>();
    const unique = [...new Set(loadReferenceNumbers)];
    for (let i = 0; i < unique.length; i += IN_CHUNK) {
      const rows = await this.db
        .selectFrom('invoice_links')
        .innerJoin('invoice_index', 'invoice_index.invoice_id', 'invoice_links.invoice_id')
        .select(['invoice_links.load_reference_number as ref', 'invoice_index.invoice_id as id', 'invoice_index.kind as kind', 'invoice_index.is_deleted as deleted'])
        .where('invoice_links.load_reference_number', 'in', unique.slice(i, i + IN_CHUNK))
        .execute();
      for (const row of rows) {
        const list = out.get(row.ref) ?? [];
        list.push({ invoiceId: row.id, kind: row.kind as InvoiceKind, deleted: Number(row.deleted) === 1 });
        out.set(row.ref, list);
      }
    }
    return out;
  }

  /**
   * The loads whose invoices the change feed has not fetched at this updatedAt yet: a load read
   * again through the feed's overlap (or a brokerage day window) costs no second fetch. Each comes
   * back with the billing signature remembered for it (null when unknown).
   */
  async feedLoadsToFetch<T extends FeedLoad>(loads: readonly T[]): Promise<Array<T & { previousSignature: string | null }>> {
    const done = new Map<string, { updatedAt: string; signature: string | null }>();
    const refs = [...new Set(loads.map((l) => l.ref))];
    for (let i = 0; i < refs.length; i += IN_CHUNK) {
      const rows = await this.db.selectFrom('invoice_feed_loads').selectAll().where('load_reference_number', 'in', refs.slice(i, i + IN_CHUNK)).execute();
      for (const row of rows) done.set(row.load_reference_number, { updatedAt: row.updated_at, signature: row.billing_signature ?? null });
    }
    return loads
      .filter((l) => {
        const seen = done.get(l.ref);
        return seen === undefined || Date.parse(l.updatedAt) > Date.parse(seen.updatedAt);
      })
      .map((l) => ({ ...l, previousSignature: done.get(l.ref)?.signature ?? null }));
  }

  async rememberFeedLoads(loads: readonly FeedLoad[]): Promise<void> {
    for (const load of loads) {
      const signature = load.signature ?? null;
      await this.db
        .insertInto('invoice_feed_loads')
        .values({ load_reference_number: load.ref, updated_at: load.updatedAt, billing_signature: signature })
        .onConflict((oc) => oc.column('load_reference_number').doUpdateSet({ updated_at: load.updatedAt, billing_signature: signature }))
        .execute();
    }
  }

  /**
   * Loads that should have an invoice (their status says so, or an `invoice#*` event named them).
   * Loads whose invoice is already known are skipped.
   */
  async addInvoiceCandidates(loadReferenceNumbers: readonly string[], reason: string): Promise<number> {
    if (loadReferenceNumbers.length === 0) return 0;
    const unique = [...new Set(loadReferenceNumbers)];
    const known = new Set<string>();
    for (let i = 0; i < unique.length; i += IN_CHUNK) {
      const refs = unique.slice(i, i + IN_CHUNK);
      const { rows } = await this.texts.execute(this.db, `invoice-links:${refs.length}`, [...refs, 0, 'subCustomer'], () =>
        this.db
          .selectFrom('invoice_links')
          .innerJoin('invoice_index', 'invoice_index.invoice_id', 'invoice_links.invoice_id')
          .select('invoice_links.load_reference_number as load_reference_number')
          .where('invoice_links.load_reference_number', 'in', refs)
          // Only a live primary or combined invoice answers "this load has its invoice".
          .where('invoice_index.is_deleted', '=', 0)
          .where('invoice_index.kind', '!=', 'subCustomer'),
      );
      for (const row of rows) known.add(row.load_reference_number);
    }
    const at = this.now().toISOString();
    const fresh = unique.filter((ref) => !known.has(ref));
    let added = 0;
    // One multi-row insert per chunk, not one statement per load (this runs for every page of loads).
    for (let i = 0; i < fresh.length; i += IN_CHUNK) {
      const rows = fresh.slice(i, i + IN_CHUNK).map((ref) => ({ load_reference_number: ref, reason, last_error: null, created_at: at, next_attempt_at: at }));
      const parameters = rows.flatMap((row) => [row.load_reference_number, row.reason, row.last_error, row.created_at, row.next_attempt_at]);
      const result = await this.texts.execute(this.db, `invoice-candidates:${rows.length}`, parameters, () =>
        this.db
          .insertInto('invoice_candidates')
          .values(rows)
          .onConflict((oc) => oc.column('load_reference_number').doNothing()),
      );
      // SQLite counts only the rows actually inserted (DO NOTHING skips the rest).
      added += Number(result.numAffectedRows ?? 0n);
    }
    return added;
  }

  /** Candidates due for a look-up now. */
  async dueInvoiceCandidates(limit: number): Promise<InvoiceCandidate[]> {
    const rows = await this.db
      .selectFrom('invoice_candidates')
      .select(['load_reference_number', 'reason', 'attempts'])
      .where('next_attempt_at', '<=', this.now().toISOString())
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ loadReferenceNumber: r.load_reference_number, reason: r.reason, attempts: r.attempts }));
  }

  /**
   * A look-up found no invoice (yet). Try again later with a growing delay — the invoice may be
   * created after the load reaches BILLING — and give up after `maxAttempts` (kept in the table
   * with its error for `status`).
   */
  async postponeInvoiceCandidate(loadReferenceNumber: string, error: string, delayMs: number): Promise<void> {
    await this.db
      .updateTable('invoice_candidates')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        last_error: error,
        next_attempt_at: new Date(this.now().getTime() + delayMs).toISOString(),
      }))
      .where('load_reference_number', '=', loadReferenceNumber)
      .execute();
  }

  async removeInvoiceCandidate(loadReferenceNumber: string): Promise<void> {
    await this.db.deleteFrom('invoice_candidates').where('load_reference_number', '=', loadReferenceNumber).execute();
  }

  async countInvoiceCandidates(): Promise<number> {
    const row = await this.db.selectFrom('invoice_candidates').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Keys delivered for a stream (snapshot streams compare them with the current list). */
  async seenKeys(stream: string): Promise<Map<string, string>> {
    const rows = await this.db.selectFrom('seen_records').select(['key', 'content_hash']).where('stream', '=', stream).execute();
    return new Map(rows.map((r) => [r.key, r.content_hash]));
  }
}
