import { z } from 'zod';
import { integerValue, isoDuration } from '../../util/zod-values.js';
import type { StreamDefinition } from '../stream-definition.js';
import { invoiceKey } from '../strategies/invoice-key.js';
import { invoiceCursorSchema, readInvoices, type InvoiceCursor } from '../strategies/invoices.js';
import { booleanOption, deletedFlagOp, stringField } from './common.js';

const invoiceOptions = z.strictObject({
  /** Main: include `paymentHistory` (payments are how invoices change after billing). */
  includePaymentHistory: booleanOption.default(true),
  /** Also list sub-customer invoices (`isSubCustomer=true`), keyed `sub:<_id>:<charge sets>`. */
  subCustomerInvoices: booleanOption.default(true),
  /** Also list combined invoices (`isShowCombinedInvoices`), keyed `combined:<_id>`. */
  combinedInvoices: booleanOption.default(true),
  /** List voided invoices (`isIncludeDeleted`) and deliver them as tombstones. */
  deletedInvoices: booleanOption.default(true),
  /** Follow loads' updatedAt (`GET /loads`, invoice statuses) and fetch the invoices of changed loads. */
  loadsChangeFeed: booleanOption.default(true),
  /** Sweep: re-read every invoice billed in the last N days (0: no sweep)… */
  sweepDays: integerValue(0, 3650).default(30),
  /** …once per this period (ISO 8601 duration)… */
  sweepPeriod: isoDuration().default(7 * 86_400_000),
  /** …spending at most this many requests per pass. */
  sweepMaxRequestsPerPass: integerValue(0, 10_000).default(5),
});

export const invoicesStream: StreamDefinition<InvoiceCursor, z.infer<typeof invoiceOptions>> = {
  name: 'invoices',
  description: 'Invoices (GET /invoices, sub-customer, combined and voided ones included; GET /invoices/<reference_number>), changes followed through loads',
  variants: ['main', 'brokerage'],
  pagedEndpoint: 'invoices',
  optionsSchema: invoiceOptions,
  cursorSchema: invoiceCursorSchema,
  cursorKind: 'billing-date windows + change feed',
  dependsOnCommits: true,
  keyDescription: '_id (combined:<_id>, sub:<_id>:<charge sets>)',
  key: invoiceKey,
  op: deletedFlagOp,
  updatedAt: (record) => stringField(record, 'updatedAt', 'billingDate'),
  // Both listings move (a seed after a backfill, `reset --to`): the backfill read both, and a
  // missing `subBilling` would re-read every sub-customer invoice from initialFrom. The loads
  // change feed is left unstarted on purpose: its first range looks up the invoices of loads
  // whose invoice no listing showed (the list omits some), which a backfill cannot find.
  resetCursor: (_variant, at) => ({
    mode: 'invoices',
    billing: { mode: 'window', highWater: at, spanMs: null, window: null },
    subBilling: { mode: 'window', highWater: at, spanMs: null, window: null },
  }),
  read: (env, cursor, plan, signal) => readInvoices(env, cursor, plan, signal),
};
