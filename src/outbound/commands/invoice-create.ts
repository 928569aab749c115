import { z } from 'zod';
import { idList } from './field-values.js';

/**
 * Main `POST /invoices` (§4.2): charge sets by id (`chargeIds`) and/or by reference number
 * (`chargeReferenceNumbers`), at least one. Lists are `a;b` or a JSON array.
 */
export const invoiceCreateSchema = z
  .strictObject({
    chargeIds: idList().optional(),
    chargeReferenceNumbers: idList().optional(),
  })
  .superRefine((body, ctx) => {
    if (!body.chargeIds?.length && !body.chargeReferenceNumbers?.length) {
      ctx.addIssue({ code: 'custom', path: ['chargeReferenceNumbers'], message: 'is required (or chargeIds): the charge sets to invoice' });
    }
  });
