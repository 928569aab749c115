import { z } from 'zod';
import type { StreamDefinition } from '../stream-definition.js';
import { invoiceCursorSchema, readInvoices, type InvoiceCursor } from '../strategies/invoices.js';
import { booleanOption, requireKey, stringField, upsertOrRemovedOp } from './common.js';

const invoiceOptions = z.strictObject({
  /** Main: include `paymentHistory` (payments are how invoices change after billing). */
  includePaymentHistory: booleanOption.default(true),
});

export const invoicesStream: StreamDefinition<InvoiceCursor, z.infer<typeof invoiceOptions>> = {
  name: 'invoices',
  description: 'Invoices (GET /invoices + GET /invoices/<reference_number>), re-polled until FULL_PAID',
  variants: ['main', 'brokerage'],
  pagedEndpoint: 'invoices',
  optionsSchema: invoiceOptions,
  cursorSchema: invoiceCursorSchema,
  cursorKind: 'billing-date windows + re-poll',
  dependsOnCommits: true,
  key: (record) => requireKey('invoices', record, '_id'),
  op: upsertOrRemovedOp,
  updatedAt: (record) => stringField(record, 'updatedAt', 'billingDate'),
  resetCursor: (_variant, at) => ({ mode: 'invoices', billing: { mode: 'window', highWater: at, spanMs: null, window: null } }),
  read: (env, cursor, plan, signal) => readInvoices(env, cursor, plan, signal),
};
