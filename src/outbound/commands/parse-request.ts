import type { z } from 'zod';
import type { ApiVariant } from '../../api/variant.js';
import { changeStatusSchema } from './change-status.js';
import { customerCreateSchema, customerUpdateSchema } from './customer-body.js';
import { invoiceCreateSchema } from './invoice-create.js';
import type { LoadTarget, OutboundCommand } from './command.js';
import { createLoadSchema } from './create-load.js';
import { COMMAND_KINDS, KIND_ALIASES, type CommandKind } from './enums.js';
import { describeValue } from '../../util/describe-value.js';
import { formatCommandIssues } from './format-issues.js';
import { normalizeFields } from './normalize-fields.js';
import { MAX_ATTACHMENT_BYTES, readAttachment } from './read-attachment.js';
import { updateLoadSchema } from './update-load.js';
import { uploadDocumentSchema } from './upload-document.js';

/** Columns that steer the command and are not part of the API body. */
const META = ['erp_key', 'kind', 'reference_number', 'load_erp_key', 'erp_customer_code', 'customer_id'] as const;
const LOAD_META = ['reference_number', 'load_erp_key'] as const;
const CUSTOMER_META = ['erp_customer_code', 'customer_id'] as const;
const CUSTOMER_KINDS = new Set<CommandKind>(['customer_create', 'customer_update']);
const MAX_KEY_LENGTH = 200;
/** No API field is this long; a longer cell is a broken export (a runaway quote, a binary blob). */
export const MAX_FIELD_LENGTH = 65_536;

export type ParseOutcome = { ok: true; command: OutboundCommand } | { ok: false; error: string };

export interface ParseContext {
  variant: ApiVariant;
  /** Folder `file` paths of document commands are relative to (undefined: not a local source). */
  attachmentFolder?: string | undefined;
}

type BodyKind = Exclude<CommandKind, 'document' | 'load_delete'>;

const schemaCache = new Map<string, z.ZodType>();

function buildSchema(kind: BodyKind, variant: ApiVariant): z.ZodType {
  switch (kind) {
    case 'create':
      return createLoadSchema(variant);
    case 'update':
      return updateLoadSchema(variant);
    case 'status':
      return changeStatusSchema(variant);
    case 'customer_create':
      return customerCreateSchema(variant);
    case 'customer_update':
      return customerUpdateSchema(variant);
    case 'invoice_create':
      return invoiceCreateSchema;
  }
}

function schemaFor(kind: BodyKind, variant: ApiVariant): z.ZodType {
  const key = `${kind}:${variant}`;
  let schema = schemaCache.get(key);
  if (!schema) {
    schema = buildSchema(kind, variant);
    schemaCache.set(key, schema);
  }
  return schema;
}

function knownFields(schema: z.ZodType): string[] {
  const inner = schema as unknown as { shape?: Record<string, unknown>; def?: { in?: { shape?: Record<string, unknown> } } };
  const shape = inner.shape ?? inner.def?.in?.shape ?? {};
  return [...META, ...Object.keys(shape)];
}

function keyText(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

type Fail = { ok: false; error: string };
const failure = (error: string): Fail => ({ ok: false, error });

/** `reference_number` or `load_erp_key`; `fallbackKey` when neither is given (undefined: no target). */
function loadTargetOf(fields: Record<string, unknown>, fallbackKey: string | undefined): LoadTarget | undefined | Fail {
  const reference = fields['reference_number'];
  const loadErpKey = fields['load_erp_key'];
  if (reference !== undefined) {
    const ref = keyText(reference);
    if (ref === undefined) return failure(`reference_number: expected text, got ${describeValue(reference)}`);
    if (loadErpKey !== undefined) return failure('load_erp_key: give either reference_number or load_erp_key, not both');
    return { referenceNumber: ref };
  }
  if (loadErpKey === undefined) return fallbackKey === undefined ? undefined : { loadErpKey: fallbackKey };
  const key = keyText(loadErpKey);
  if (key === undefined) return failure(`load_erp_key: expected text, got ${describeValue(loadErpKey)}`);
  return { loadErpKey: key };
}

/** The ERP's customer code of a customer command (`erp_customer_code`, default `erp_key`). */
function customerCodeOf(fields: Record<string, unknown>, erpKey: string): string | Fail {
  const raw = fields['erp_customer_code'];
  if (raw === undefined) return erpKey;
  const code = keyText(raw);
  if (code === undefined) return failure(`erp_customer_code: expected text, got ${describeValue(raw)}`);
  if (code.length > MAX_KEY_LENGTH) return failure(`erp_customer_code: longer than ${MAX_KEY_LENGTH} characters`);
  return code;
}

/** Steering columns that do not belong to this kind (given non-empty) are errors, not ignored. */
function misplacedMeta(kind: CommandKind, fields: Record<string, unknown>): string | undefined {
  const customer = CUSTOMER_KINDS.has(kind);
  const refused: readonly string[] =
    kind === 'create' ? [...LOAD_META, ...CUSTOMER_META] : kind === 'customer_create' ? [...LOAD_META, 'customer_id'] : customer ? LOAD_META : CUSTOMER_META;
  const found = refused.find((key) => fields[key] !== undefined);
  if (found === undefined) return undefined;
  if (kind === 'create' && found === 'reference_number') return 'reference_number: not accepted for kind create (the API assigns it)';
  if (kind === 'create' && found === 'load_erp_key') return 'load_erp_key: not accepted for kind create (erp_key identifies the load)';
  if (kind === 'customer_create' && found === 'customer_id') return 'customer_id: not accepted for kind customer_create (the API assigns it)';
  return `${found}: not accepted for kind ${kind} (${customer ? 'it addresses a load; customer commands name their customer by customer_id or erp_customer_code' : 'it names a customer; only customer_create and customer_update take it'})`;
}

/**
 * Validates one inbound request into a command, before anything is sent (design §3). The error
 * names every bad field with the value found, e.g. `type_of_load: "IMPRT" is not one of IMPORT,
 * EXPORT, ROAD, BILL_ONLY (did you mean IMPORT?)`.
 */
export async function parseRequest(rawFields: Record<string, unknown>, context: ParseContext): Promise<ParseOutcome> {
  const rawKind = Object.entries(rawFields).find(([key]) => key.trim() === 'kind')?.[1];
  const isCreate = typeof rawKind === 'string' && ['create', 'create_load'].includes(rawKind.trim().toLowerCase());
  const fields = normalizeFields(rawFields, isCreate);
  for (const [key, value] of Object.entries(fields)) {
    if (key !== 'file_base64' && typeof value === 'string' && value.length > MAX_FIELD_LENGTH) {
      return failure(`${key}: ${value.length} characters, more than the ${MAX_FIELD_LENGTH} a field may hold`);
    }
  }
  const erpKey = keyText(fields['erp_key']);
  if (erpKey === undefined) {
    return failure(fields['erp_key'] === undefined ? 'erp_key: is required' : `erp_key: expected text, got ${describeValue(fields['erp_key'])}`);
  }
  if (erpKey.length > MAX_KEY_LENGTH) return failure(`erp_key: longer than ${MAX_KEY_LENGTH} characters`);
  const kindRaw = fields['kind'];
  const lowered = typeof kindRaw === 'string' ? kindRaw.toLowerCase() : undefined;
  const kind = (lowered === undefined ? undefined : (KIND_ALIASES[lowered] ?? lowered)) as CommandKind | undefined;
  if (kind === undefined || !(COMMAND_KINDS as readonly string[]).includes(kind)) {
    const allowed = `${COMMAND_KINDS.join(', ')} (or ${Object.keys(KIND_ALIASES).join(', ')})`;
    return failure(kindRaw === undefined ? `kind: is required (one of ${allowed})` : `kind: ${describeValue(kindRaw)} is not one of ${allowed}`);
  }
  if (kind === 'invoice_create' && context.variant !== 'main') {
    return failure('kind: invoice_create is not available on the brokerage variant (POST /invoices exists in main only, spec §4.2)');
  }
  const misplaced = misplacedMeta(kind, fields);
  if (misplaced) return failure(misplaced);
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (!(META as readonly string[]).includes(key)) body[key] = value;

  if (kind === 'customer_create' || kind === 'customer_update') return parseCustomer(kind, erpKey, fields, body, context);
  // Without a target a load command acts on the load created under its own ERP key; an invoice has no default.
  const target = kind === 'create' ? undefined : loadTargetOf(fields, kind === 'invoice_create' ? undefined : erpKey);
  if (target && 'ok' in target) return target;
  if (kind === 'document') return parseDocument(erpKey, target!, body, context);
  if (kind === 'load_delete') {
    const extra = Object.keys(body);
    if (extra.length > 0) return failure(`${extra.join(', ')}: unknown field(s) for kind load_delete (it takes only reference_number or load_erp_key)`);
    return { ok: true, command: { kind, erpKey, target: target! } };
  }
  const schema = schemaFor(kind, context.variant);
  const parsed = schema.safeParse(body);
  if (!parsed.success) return failure(formatCommandIssues(parsed.error, kind, knownFields(schema)));
  const data = parsed.data as Record<string, unknown>;
  if (kind === 'create') return { ok: true, command: { kind: 'create', erpKey, body: data } };
  if (kind === 'update') return { ok: true, command: { kind: 'update', erpKey, target: target!, body: data } };
  if (kind === 'invoice_create') {
    if (data['chargeIds'] !== undefined && target === undefined) {
      return failure('reference_number: is required with chargeIds (or load_erp_key): an invoice whose answer was lost is looked up by its load');
    }
    return { ok: true, command: { kind, erpKey, ...(target ? { target } : {}), body: data as { chargeIds?: string[]; chargeReferenceNumbers?: string[] } } };
  }
  return { ok: true, command: { kind: 'status', erpKey, target: target!, params: data } };
}

function parseCustomer(
  kind: 'customer_create' | 'customer_update',
  erpKey: string,
  fields: Record<string, unknown>,
  body: Record<string, unknown>,
  context: ParseContext,
): ParseOutcome {
  const code = customerCodeOf(fields, erpKey);
  if (typeof code !== 'string') return code;
  const schema = schemaFor(kind, context.variant);
  const parsed = schema.safeParse(body);
  if (!parsed.success) return failure(formatCommandIssues(parsed.error, kind, knownFields(schema)));
  const data = parsed.data as Record<string, unknown>;
  if (kind === 'customer_create') return { ok: true, command: { kind, erpKey, customerCode: code, body: data } };
  const rawId = fields['customer_id'];
  if (rawId !== undefined) {
    const id = keyText(rawId);
    if (id === undefined) return failure(`customer_id: expected text, got ${describeValue(rawId)}`);
    if (fields['erp_customer_code'] !== undefined) return failure('erp_customer_code: give either customer_id or erp_customer_code, not both');
    return { ok: true, command: { kind, erpKey, target: { customerId: id }, body: data } };
  }
  return { ok: true, command: { kind, erpKey, target: { customerCode: code }, body: data } };
}
async function parseDocument(erpKey: string, target: LoadTarget, body: Record<string, unknown>, context: ParseContext): Promise<ParseOutcome> {
  const parsed = uploadDocumentSchema.safeParse(body);
  if (!parsed.success) return { ok: false, error: formatCommandIssues(parsed.error, 'document', knownFields(uploadDocumentSchema)) };
  const input = parsed.data;
  let contentBase64: string;
  let fileName: string;
  if (input.file !== undefined) {
    const read = await readAttachment(input.file, context.attachmentFolder);
    if (!read.ok) return { ok: false, error: read.error };
    contentBase64 = read.bytes.toString('base64');
    fileName = input.file_name ?? read.fileName;
  } else {
    const bytes = Buffer.from(input.file_base64 ?? '', 'base64');
    if (bytes.length === 0) return { ok: false, error: 'file_base64: decodes to an empty file' };
    if (bytes.length > MAX_ATTACHMENT_BYTES) return { ok: false, error: `file_base64: ${bytes.length} bytes, more than the ${MAX_ATTACHMENT_BYTES} allowed` };
    contentBase64 = bytes.toString('base64');
    fileName = input.file_name ?? 'document';
  }
  return {
    ok: true,
    command: {
      kind: 'document',
      erpKey,
      target,
      documentType: input.documentType,
      fileName,
      contentBase64,
      ...(input.content_type !== undefined ? { contentType: input.content_type } : {}),
      ...(input.customerId !== undefined ? { customerId: input.customerId } : {}),
    },
  };
}
