import type { z } from 'zod';
import type { ApiVariant } from '../../api/variant.js';
import { changeStatusSchema } from './change-status.js';
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
const META = ['erp_key', 'kind', 'reference_number', 'load_erp_key'] as const;
const MAX_KEY_LENGTH = 200;
/** No API field is this long; a longer cell is a broken export (a runaway quote, a binary blob). */
export const MAX_FIELD_LENGTH = 65_536;

export type ParseOutcome = { ok: true; command: OutboundCommand } | { ok: false; error: string };

export interface ParseContext {
  variant: ApiVariant;
  /** Folder `file` paths of document commands are relative to (undefined: not a local source). */
  attachmentFolder?: string | undefined;
}

const schemaCache = new Map<string, z.ZodType>();

function schemaFor(kind: Exclude<CommandKind, 'document'>, variant: ApiVariant): z.ZodType {
  const key = `${kind}:${variant}`;
  let schema = schemaCache.get(key);
  if (!schema) {
    schema = kind === 'create' ? createLoadSchema(variant) : kind === 'update' ? updateLoadSchema(variant) : changeStatusSchema(variant);
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
      return { ok: false, error: `${key}: ${value.length} characters, more than the ${MAX_FIELD_LENGTH} a field may hold` };
    }
  }
  const erpKey = keyText(fields['erp_key']);
  if (erpKey === undefined) {
    return { ok: false, error: fields['erp_key'] === undefined ? 'erp_key: is required' : `erp_key: expected text, got ${describeValue(fields['erp_key'])}` };
  }
  if (erpKey.length > MAX_KEY_LENGTH) return { ok: false, error: `erp_key: longer than ${MAX_KEY_LENGTH} characters` };
  const kindRaw = fields['kind'];
  const lowered = typeof kindRaw === 'string' ? kindRaw.toLowerCase() : undefined;
  const kind = lowered === undefined ? undefined : (KIND_ALIASES[lowered] ?? lowered);
  if (kind === undefined || !(COMMAND_KINDS as readonly string[]).includes(kind)) {
    const allowed = `${COMMAND_KINDS.join(', ')} (or ${Object.keys(KIND_ALIASES).join(', ')})`;
    return { ok: false, error: kindRaw === undefined ? `kind: is required (one of ${allowed})` : `kind: ${describeValue(kindRaw)} is not one of ${allowed}` };
  }
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (!(META as readonly string[]).includes(key)) body[key] = value;

  let target: LoadTarget | undefined;
  const reference = fields['reference_number'];
  const loadErpKey = fields['load_erp_key'];
  if (kind === 'create') {
    if (reference !== undefined) return { ok: false, error: 'reference_number: not accepted for kind create (the API assigns it)' };
    if (loadErpKey !== undefined) return { ok: false, error: 'load_erp_key: not accepted for kind create (erp_key identifies the load)' };
  } else if (reference !== undefined) {
    const ref = keyText(reference);
    if (ref === undefined) return { ok: false, error: `reference_number: expected text, got ${describeValue(reference)}` };
    if (loadErpKey !== undefined) return { ok: false, error: 'load_erp_key: give either reference_number or load_erp_key, not both' };
    target = { referenceNumber: ref };
  } else {
    // Without a target the command acts on the load created under its own ERP key.
    const key = loadErpKey === undefined ? erpKey : keyText(loadErpKey);
    if (key === undefined) return { ok: false, error: `load_erp_key: expected text, got ${describeValue(loadErpKey)}` };
    target = { loadErpKey: key };
  }

  if (kind === 'document') return parseDocument(erpKey, target!, body, context);
  const schema = schemaFor(kind as Exclude<CommandKind, 'document'>, context.variant);
  const parsed = schema.safeParse(body);
  if (!parsed.success) return { ok: false, error: formatCommandIssues(parsed.error, kind, knownFields(schema)) };
  const data = parsed.data as Record<string, unknown>;
  if (kind === 'create') return { ok: true, command: { kind: 'create', erpKey, body: data } };
  if (kind === 'update') return { ok: true, command: { kind: 'update', erpKey, target: target!, body: data } };
  return { ok: true, command: { kind: 'status', erpKey, target: target!, params: data } };
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
