import { z } from 'zod';
import { windowCursorSchema } from './closed-window.js';
import { loadPagesCursorSchema } from './load-pages.js';

/** Where the invoice sweep stands: one cycle re-reads every invoice billed in the last N days. */
export const sweepCursorSchema = z.strictObject({
  listing: z.enum(['main', 'sub']),
  from: z.string(),
  to: z.string(),
  skip: z.number().int().min(0),
  startedAt: z.string(),
  done: z.boolean(),
});
export type SweepCursor = z.infer<typeof sweepCursorSchema>;

/**
 * The invoices stream's checkpoint. Fields added with issue 12 are optional so that a checkpoint
 * written before reads as "not started": sub-customer windows then start at `initialFrom` (they
 * were never listed), the change feed at the end of the last billing range.
 */
export const invoiceCursorSchema = z.strictObject({
  mode: z.literal('invoices'),
  /** New invoices (the `main` listing) by billing-date windows. */
  billing: windowCursorSchema,
  /** New sub-customer invoices by billing-date windows. */
  subBilling: windowCursorSchema.optional(),
  /** The loads change feed (keyset on main, closed windows on brokerage). */
  feed: loadPagesCursorSchema.optional(),
  /**
   * The feed's first range starts at `initialFrom`; loads changed up to this instant had their
   * invoices read by the billing windows already, so only those without a known invoice (the list
   * omits some) are looked up.
   */
  feedCatchUpUntil: z.string().nullable().optional(),
  sweep: sweepCursorSchema.nullable().optional(),
});
export type InvoiceCursor = z.infer<typeof invoiceCursorSchema>;
