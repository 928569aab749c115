/**
 * The load a non-create command acts on: a reference number the API gave, or the ERP key of a
 * create command in the outbox (the command then waits for that create and uses its result).
 */
export type LoadTarget = { referenceNumber: string } | { loadErpKey: string };

export interface CreateCommand {
  kind: 'create';
  erpKey: string;
  body: Record<string, unknown>;
  /**
   * ERP customer codes left in `caller`/`shipper`/`consignee` because they name a customer this
   * outbox creates (`customer_create`): replaced by its API id when the command is sent, so the
   * load waits for its customer (see customer-codes.ts).
   */
  customerCodes?: string[];
}

export interface UpdateCommand {
  kind: 'update';
  erpKey: string;
  target: LoadTarget;
  body: Record<string, unknown>;
  customerCodes?: string[];
}

export interface StatusCommand {
  kind: 'status';
  erpKey: string;
  target: LoadTarget;
  /** Main: `{ status }`; brokerage: the §4.4.4 parameters without `reference_number`. */
  params: Record<string, unknown>;
}

export interface DocumentCommand {
  kind: 'document';
  erpKey: string;
  target: LoadTarget;
  documentType: string;
  fileName: string;
  /** The file's bytes, base64: the command is self-contained once in the outbox. */
  contentBase64: string;
  contentType?: string;
  customerId?: string;
}

/**
 * The customer a `customer_update` acts on: an API id (given, or resolved from synced customers
 * when the request was taken), or the ERP code of a `customer_create` in the outbox (the update
 * then waits for that create and uses its result).
 */
export type CustomerTarget = { customerId: string } | { customerCode: string };

export interface CustomerCreateCommand {
  kind: 'customer_create';
  erpKey: string;
  /** The ERP's code of the customer (`erp_customer_code`, default `erp_key`): loads name it by this. */
  customerCode: string;
  body: Record<string, unknown>;
}

export interface CustomerUpdateCommand {
  kind: 'customer_update';
  erpKey: string;
  target: CustomerTarget;
  body: Record<string, unknown>;
}

/** `DELETE /loads/<id>`: the id is found from the target when the command runs. */
export interface LoadDeleteCommand {
  kind: 'load_delete';
  erpKey: string;
  target: LoadTarget;
}

/** Main `POST /invoices`. `target` (optional with charge reference numbers) orders it after its load's commands. */
export interface InvoiceCreateCommand {
  kind: 'invoice_create';
  erpKey: string;
  target?: LoadTarget;
  body: { chargeIds?: string[]; chargeReferenceNumbers?: string[] };
}

export type OutboundCommand =
  | CreateCommand
  | UpdateCommand
  | StatusCommand
  | DocumentCommand
  | CustomerCreateCommand
  | CustomerUpdateCommand
  | LoadDeleteCommand
  | InvoiceCreateCommand;

/** Fields naming customers: API ids, or ERP codes resolved through the customer directory or the outbox. */
export const PARTY_FIELDS = ['caller', 'shipper', 'consignee'] as const;

/** Commands whose body may name customers by ERP code. */
export function partyBodyOf(command: OutboundCommand): Record<string, unknown> | undefined {
  return command.kind === 'create' || command.kind === 'update' ? command.body : undefined;
}
