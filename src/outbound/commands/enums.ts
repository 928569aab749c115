/** Outbound's own vocabulary; the spec's enumerations are in src/api/spec-enums.ts. */

export const COMMAND_KINDS = ['create', 'update', 'status', 'document', 'customer_create', 'customer_update', 'load_delete', 'invoice_create'] as const;
export type CommandKind = (typeof COMMAND_KINDS)[number];

/** Long spellings (used by the SQL staging table's documentation) of the same kinds. */
export const KIND_ALIASES: Readonly<Record<string, CommandKind>> = {
  create_load: 'create',
  update_load: 'update',
  change_status: 'status',
  upload_document: 'document',
  create_customer: 'customer_create',
  update_customer: 'customer_update',
  delete_load: 'load_delete',
  create_invoice: 'invoice_create',
};

/**
 * Kinds that create something (a second send would duplicate it): the same erp_key with other
 * content is refused rather than made a new revision.
 */
export const CREATE_KINDS: ReadonlySet<string> = new Set(['create', 'customer_create', 'invoice_create']);

/**
 * Kinds whose request may have taken effect when its answer is lost (POSTs, and the delete, whose
 * repeat answers 404/410): an interrupted or ambiguous send is looked up (`reconciling`) before
 * anything is sent again. The other kinds are idempotent PUTs and are simply retried.
 */
export const RECONCILED_KINDS: ReadonlySet<string> = new Set(['create', 'document', 'customer_create', 'invoice_create', 'load_delete']);
