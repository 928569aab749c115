import type { ApiClient } from '../api/api-client.js';
import { createInvoices } from '../api/endpoints/invoices.js';
import type { OutboxStore } from '../state/stores/outbox-store.js';
import type { OutboxRow } from '../state/tables.js';
import { classifyFailure } from './classify-failure.js';
import type { InvoiceCreateCommand } from './commands/command.js';
import { invoicesCovering, type FoundInvoice } from './reconcile-invoice.js';
import { afterIdempotentFailure, afterPostFailure, type StepOutcome } from './step-outcome.js';

/** Marker in `result_note` before the invoice is done: the invoices covering its charges before the first send. */
const BEFORE = 'invoices-before:';
/** Looked back this far: an invoice we make is billed now; the list covers only recent days unbounded. */
const LOOK_BACK_MS = 86_400_000;

interface Before {
  from: string;
  ids: string[];
}

function beforeOf(row: OutboxRow): Before | undefined {
  if (!row.result_note?.startsWith(BEFORE)) return undefined;
  return JSON.parse(row.result_note.slice(BEFORE.length)) as Before;
}

/**
 * `invoice_create` (main `POST /invoices`), exactly once. The answer carries no invoice (§4.2),
 * so the invoices covering the charge sets are listed before the first send and remembered on
 * the row; after an ambiguous send, an invoice covering them that was not there before is ours.
 * Only when none is found is it sent again.
 */
export class InvoiceStep {
  constructor(
    private readonly client: ApiClient,
    private readonly outbox: OutboxStore,
    private readonly maxAttempts: number,
  ) {}

  async run(row: OutboxRow, command: InvoiceCreateCommand, loadReference: string | undefined, signal: AbortSignal): Promise<StepOutcome> {
    // With chargeIds the invoice is recognised by its load (the ids do not appear on invoices).
    const numbers = [...(command.body.chargeReferenceNumbers ?? []), ...(command.body.chargeIds?.length && loadReference ? [loadReference] : [])];
    let before = beforeOf(row);
    try {
      if (row.state === 'reconciling') {
        if (!before) return { type: 'dead', error: `the invoice's outcome is unknown (${row.last_error ?? 'interrupted'}) and no look-up baseline was recorded; not re-sent to avoid a second invoice: check the API and retry or cancel` };
        const made = await this.newInvoices(numbers, before, signal);
        if (made.length > 0) return this.done(made, numbers, loadReference, 'found after an ambiguous create');
        if (row.attempts >= this.maxAttempts) return { type: 'dead', error: `not invoiced after ${row.attempts} attempts; last error: ${row.last_error ?? 'unknown'}` };
      } else if (!before) {
        const from = new Date(this.client.clock.now().getTime() - LOOK_BACK_MS).toISOString();
        before = { from, ids: (await invoicesCovering(this.client, numbers, from, signal)).map((i) => i.id) };
        await this.outbox.update(row.id, { result_note: `${BEFORE}${JSON.stringify(before)}` });
      }
    } catch (error) {
      return afterIdempotentFailure(error, row.state === 'reconciling' ? 'reconcile' : 'retry');
    }
    await this.outbox.markSending(row.id, row.attempts + 1, row.sent_at ?? this.client.clock.now().toISOString());
    try {
      await createInvoices(this.client, command.body, signal);
    } catch (error) {
      return afterPostFailure(error);
    }
    // The answer is empty: name the invoice if the list shows it already (a failed look-up does not undo the create).
    let made: FoundInvoice[] = [];
    try {
      made = await this.newInvoices(numbers, before, signal);
    } catch (error) {
      if (classifyFailure(error) === 'aborted') throw error;
    }
    return this.done(made, numbers, loadReference, 'invoiced');
  }

  private async newInvoices(numbers: readonly string[], before: Before, signal: AbortSignal): Promise<FoundInvoice[]> {
    return (await invoicesCovering(this.client, numbers, before.from, signal)).filter((i) => !before.ids.includes(i.id));
  }

  private done(made: readonly FoundInvoice[], numbers: readonly string[], loadReference: string | undefined, how: string): StepOutcome {
    const first = made[0];
    const note = first ? `${how}: invoice ${made.map((i) => i.id).join(', ')}` : how;
    return { type: 'done', result: { referenceNumber: first?.loadReference ?? loadReference ?? numbers[0] ?? null, loadId: first?.loadId ?? null, note } };
  }
}
