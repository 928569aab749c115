/**
 * The load a non-create command acts on: a reference number the API gave, or the ERP key of a
 * create command in the outbox (the command then waits for that create and uses its result).
 */
export type LoadTarget = { referenceNumber: string } | { loadErpKey: string };

export interface CreateCommand {
  kind: 'create';
  erpKey: string;
  body: Record<string, unknown>;
}

export interface UpdateCommand {
  kind: 'update';
  erpKey: string;
  target: LoadTarget;
  body: Record<string, unknown>;
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

export type OutboundCommand = CreateCommand | UpdateCommand | StatusCommand | DocumentCommand;
