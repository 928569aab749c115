import type { ApiClient } from '../api/api-client.js';
import { createCustomer, updateCustomer } from '../api/endpoints/customers.js';
import type { Customer } from '../api/schemas/resources.js';
import type { CustomerDirectoryStore } from '../state/stores/customer-directory-store.js';
import type { OutboxStore } from '../state/stores/outbox-store.js';
import type { OutboxRow } from '../state/tables.js';
import { classifyFailure } from './classify-failure.js';
import type { CustomerCreateCommand, CustomerUpdateCommand } from './commands/command.js';
import { resolveCustomerCodes } from './customer-codes.js';
import { findCreatedCustomer } from './reconcile-customer.js';
import { afterIdempotentFailure, afterPostFailure, type StepOutcome } from './step-outcome.js';
import { describeError } from '../util/errors.js';

/**
 * `customer_create` and `customer_update` (§4.7; the nested `data.statusCode`/`data.data` reply
 * is unwrapped by the endpoint). A create is exactly-once like a load's: `sending` is persisted
 * first, and a lost answer is looked up by `companyID` and `company_name` before any re-send.
 * The result's `referenceNumber` is the customer's API `_id`: the outbox keeps it with the ERP
 * code (the create's group), so loads naming the code get it; the directory learns it too.
 */
export class CustomerSteps {
  constructor(
    private readonly client: ApiClient,
    private readonly outbox: OutboxStore,
    private readonly directory: CustomerDirectoryStore | undefined,
    private readonly maxAttempts: number,
  ) {}

  async create(row: OutboxRow, command: CustomerCreateCommand, signal: AbortSignal): Promise<StepOutcome> {
    if (row.state === 'reconciling') {
      let lookup;
      try {
        lookup = await findCreatedCustomer(this.client, command.body, row.sent_at, signal);
      } catch (error) {
        if (classifyFailure(error) === 'aborted') throw error;
        return { type: 'reconcile', error: `looking the customer up after an ambiguous create failed: ${describeError(error)}` };
      }
      if (lookup.found) {
        const note = `found by companyID after an ambiguous create${lookup.matches > 1 ? ` (${lookup.matches} matching customers; the first created is taken)` : ''}`;
        return this.done(lookup.found, note);
      }
      // Truly absent: only now is the create sent again.
      if (row.attempts >= this.maxAttempts) return { type: 'dead', error: `not created after ${row.attempts} attempts; last error: ${row.last_error ?? 'unknown'}` };
    }
    await this.outbox.markSending(row.id, row.attempts + 1, row.sent_at ?? this.client.clock.now().toISOString());
    try {
      return await this.done(await createCustomer(this.client, command.body, signal), `created (ERP code ${command.customerCode})`);
    } catch (error) {
      return afterPostFailure(error);
    }
  }

  async update(row: OutboxRow, command: CustomerUpdateCommand, signal: AbortSignal): Promise<StepOutcome> {
    const target = await this.customerId(command);
    if ('outcome' in target) return target.outcome;
    await this.outbox.markSending(row.id, row.attempts + 1, row.sent_at ?? this.client.clock.now().toISOString());
    try {
      return await this.done(await updateCustomer(this.client, target.id, command.body, signal), 'updated');
    } catch (error) {
      return afterIdempotentFailure(error);
    }
  }

  private async customerId(command: CustomerUpdateCommand): Promise<{ id: string } | { outcome: StepOutcome }> {
    if ('customerId' in command.target) return { id: command.target.customerId };
    const code = command.target.customerCode;
    const resolved = await resolveCustomerCodes(this.outbox, [code]);
    return resolved.ok ? { id: resolved.ids.get(code)! } : { outcome: { type: resolved.outcome, error: resolved.error } };
  }

  private async done(customer: Customer, note: string): Promise<StepOutcome> {
    try {
      await this.directory?.remember('customers', [customer]);
    } catch {
      // The outbox row holds code and id already; the directory is refilled by the customers stream.
    }
    return { type: 'done', result: { referenceNumber: customer._id, loadId: null, note } };
  }
}
