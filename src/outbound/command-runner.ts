import type { ApiClient } from '../api/api-client.js';
import { changeLoadStatus, changeLoadStatusBrokerage, createLoad, listLoadDocuments, updateLoad, uploadLoadDocument } from '../api/endpoints/loads.js';
import type { OutboundConfig } from '../config/types.js';
import type { OutboxRow } from '../state/tables.js';
import { describeError } from '../util/errors.js';
import { classifyFailure } from './classify-failure.js';
import { decodeCommand } from './command-codec.js';
import type { CreateCommand, DocumentCommand, LoadTarget, OutboundCommand } from './commands/command.js';
import type { OutboxStore } from '../state/stores/outbox-store.js';
import type { CustomerDirectoryStore } from '../state/stores/customer-directory-store.js';
import { resolveCustomerCodes, substituteCodes } from './customer-codes.js';
import { CustomerSteps } from './customer-steps.js';
import { InvoiceStep } from './invoice-step.js';
import { LoadDeleteStep } from './load-delete-step.js';
import { findCreatedLoad, findUploadedDocument, reconcileKey } from './reconcile.js';
import { afterIdempotentFailure, afterPostFailure, type StepOutcome } from './step-outcome.js';

export type { StepOutcome } from './step-outcome.js';

export interface RunnerSettings {
  reconcileBy: OutboundConfig['reconcileBy'];
  setSecondaryReferenceNo: boolean;
  maxAttempts: number;
}

/** Marker in `result_note` of a document command before it is done: documents of its type before the first upload. */
const DOCS_BEFORE = 'documents-before:';

/**
 * Executes one step of a command against the API. Every POST is preceded by a persisted
 * `sending` state and followed, when its outcome is ambiguous, by a look-up instead of a re-send
 * (design §3): a load is never created twice, a document never uploaded twice knowingly.
 */
export class CommandRunner {
  private readonly customers: CustomerSteps;
  private readonly deletes: LoadDeleteStep;
  private readonly invoices: InvoiceStep;

  constructor(
    private readonly client: ApiClient,
    private readonly outbox: OutboxStore,
    private readonly settings: RunnerSettings,
    /** Learns customers created or changed here (optional: the outbox alone maps ERP codes to ids). */
    directory?: CustomerDirectoryStore,
  ) {
    this.customers = new CustomerSteps(client, outbox, directory, settings.maxAttempts);
    this.deletes = new LoadDeleteStep(client, outbox, settings.maxAttempts);
    this.invoices = new InvoiceStep(client, outbox, settings.maxAttempts);
  }

  async step(row: OutboxRow, signal: AbortSignal): Promise<StepOutcome> {
    let command = decodeCommand(row.payload);
    if ((command.kind === 'create' || command.kind === 'update') && command.customerCodes?.length) {
      // Customers this outbox creates: the load waits for them and gets their ids.
      const codes = await resolveCustomerCodes(this.outbox, command.customerCodes);
      if (!codes.ok) return { type: codes.outcome, error: codes.error };
      command = { ...command, body: substituteCodes(command.body, codes.ids) };
    }
    switch (command.kind) {
      case 'create':
        return row.state === 'reconciling' ? this.reconcileCreate(row, command, signal) : this.sendCreate(row, command, signal);
      case 'customer_create':
        return this.customers.create(row, command, signal);
      case 'customer_update':
        return this.customers.update(row, command, signal);
      case 'invoice_create': {
        if (!command.target) return this.invoices.run(row, command, undefined, signal);
        const load = await this.targetOf(command.target);
        return 'outcome' in load ? load.outcome : this.invoices.run(row, command, load.referenceNumber, signal);
      }
      default:
        break;
    }
    const target = await this.targetOf(command.target);
    if ('outcome' in target) return target.outcome;
    if (command.kind === 'document') return this.document(row, command, target.referenceNumber, signal);
    if (command.kind === 'load_delete') return this.deletes.run(row, target, signal);
    return this.idempotentCall(row, command, target.referenceNumber, signal);
  }

  /** The body actually sent: the ERP key goes into `secondaryReferenceNo` unless the ERP gave one. */
  createBody(command: CreateCommand): Record<string, unknown> {
    const body = { ...command.body };
    if (this.settings.setSecondaryReferenceNo && body['secondaryReferenceNo'] === undefined) body['secondaryReferenceNo'] = command.erpKey;
    return body;
  }

  private async sendCreate(row: OutboxRow, command: CreateCommand, signal: AbortSignal): Promise<StepOutcome> {
    const attempts = row.attempts + 1;
    await this.outbox.markSending(row.id, attempts, row.sent_at ?? this.client.clock.now().toISOString());
    try {
      const load = await createLoad(this.client, this.createBody(command), signal);
      return { type: 'done', result: { referenceNumber: load.reference_number, loadId: typeof load._id === 'string' ? load._id : null } };
    } catch (error) {
      return afterPostFailure(error);
    }
  }

  private async reconcileCreate(row: OutboxRow, command: CreateCommand, signal: AbortSignal): Promise<StepOutcome> {
    const body = this.createBody(command);
    const by = reconcileKey(body, this.settings.reconcileBy) ? this.settings.reconcileBy : reconcileKey(body, 'secondaryReferenceNo') ? 'secondaryReferenceNo' : undefined;
    if (!by) {
      return {
        type: 'dead',
        error: `the create's outcome is unknown (${row.last_error ?? 'interrupted'}) and it carries neither secondaryReferenceNo nor containerNo to look it up by; not re-sent to avoid a duplicate load: check the API and retry or cancel`,
      };
    }
    let lookup;
    try {
      lookup = await findCreatedLoad(this.client, body, by, row.sent_at, signal);
    } catch (error) {
      if (classifyFailure(error) === 'aborted') throw error;
      return { type: 'reconcile', error: `looking the load up after an ambiguous create failed: ${describeError(error)}` };
    }
    if (lookup.found) {
      const deleted = lookup.found.deleted ? '; deleted at the API since, not created again' : '';
      const note = `found by ${by} after an ambiguous create${lookup.matches > 1 ? ` (${lookup.matches} matching loads; the first created is taken)` : ''}${deleted}`;
      return { type: 'done', result: { referenceNumber: lookup.found.referenceNumber, loadId: lookup.found.loadId, note } };
    }
    // Truly absent: only now is the create sent again.
    if (row.attempts >= this.settings.maxAttempts) return { type: 'dead', error: `not created after ${row.attempts} attempts; last error: ${row.last_error ?? 'unknown'}` };
    return this.sendCreate(row, command, signal);
  }

  /** The load's reference number, and its id when the outbox knows it (from the create that made it). */
  private async targetOf(target: LoadTarget): Promise<{ referenceNumber: string; loadId?: string | undefined } | { outcome: StepOutcome }> {
    if ('referenceNumber' in target) {
      const made = await this.outbox.createByReference(target.referenceNumber);
      return { referenceNumber: target.referenceNumber, loadId: made?.result_load_id ?? undefined };
    }
    const create = await this.outbox.latest(target.loadErpKey, 'create');
    if (!create) return { outcome: { type: 'dead', error: `load_erp_key: no create with erp_key "${target.loadErpKey}" in the outbox` } };
    if (create.state === 'done' && create.result_reference_number) return { referenceNumber: create.result_reference_number, loadId: create.result_load_id ?? undefined };
    if (create.state === 'dead' || create.state === 'cancelled') {
      return { outcome: { type: 'dead', error: `blocked: the create of its load (outbox #${create.id}, erp_key "${create.erp_key}") is ${create.state}: ${create.last_error ?? ''}`.trim() } };
    }
    return { outcome: { type: 'wait', error: `waiting for the create of its load (outbox #${create.id})` } };
  }

  /** PUTs are idempotent: the client already retried faults; what is left is retried later. */
  private async idempotentCall(row: OutboxRow, command: Extract<OutboundCommand, { kind: 'update' | 'status' }>, referenceNumber: string, signal: AbortSignal): Promise<StepOutcome> {
    await this.outbox.markSending(row.id, row.attempts + 1, row.sent_at ?? this.client.clock.now().toISOString());
    try {
      const load =
        command.kind === 'update'
          ? await updateLoad(this.client, referenceNumber, command.body, signal)
          : command.kind === 'status' && this.client.variant === 'main'
            ? await changeLoadStatus(this.client, referenceNumber, command.params['status'] as 'PENDING' | 'AVAILABLE', signal)
            : await changeLoadStatusBrokerage(this.client, { ...(command.kind === 'status' ? command.params : {}), reference_number: referenceNumber }, signal);
      return { type: 'done', result: { referenceNumber: load.reference_number, loadId: typeof load._id === 'string' ? load._id : null } };
    } catch (error) {
      return afterIdempotentFailure(error);
    }
  }

  private async document(row: OutboxRow, command: DocumentCommand, referenceNumber: string, signal: AbortSignal): Promise<StepOutcome> {
    const before = row.result_note?.startsWith(DOCS_BEFORE) ? Number(row.result_note.slice(DOCS_BEFORE.length)) : undefined;
    try {
      if (row.state === 'reconciling') {
        const url = await findUploadedDocument(this.client, referenceNumber, command.documentType, command.fileName, before, signal);
        if (url !== null) return { type: 'done', result: { referenceNumber, loadId: null, note: `uploaded: ${url} (found after an ambiguous upload)` } };
        if (row.attempts >= this.settings.maxAttempts) return { type: 'dead', error: `not uploaded after ${row.attempts} attempts; last error: ${row.last_error ?? 'unknown'}` };
      } else if (before === undefined) {
        // Counted once, before the first upload, so an ambiguous upload can be recognised later.
        const count = (await listLoadDocuments(this.client, referenceNumber, command.documentType, signal)).length;
        await this.outbox.update(row.id, { result_note: `${DOCS_BEFORE}${count}` });
      }
    } catch (error) {
      return afterIdempotentFailure(error, row.state === 'reconciling' ? 'reconcile' : 'retry');
    }
    await this.outbox.markSending(row.id, row.attempts + 1, row.sent_at ?? this.client.clock.now().toISOString());
    try {
      const uploaded = await uploadLoadDocument(
        this.client,
        {
          referenceNumber,
          documentType: command.documentType,
          fileName: command.fileName,
          content: Buffer.from(command.contentBase64, 'base64'),
          ...(command.contentType ? { contentType: command.contentType } : {}),
          ...(command.customerId ? { customerId: command.customerId } : {}),
        },
        signal,
      );
      return { type: 'done', result: { referenceNumber, loadId: null, note: uploaded.url ? `uploaded: ${uploaded.url}` : 'uploaded' } };
    } catch (error) {
      return afterPostFailure(error);
    }
  }

}
