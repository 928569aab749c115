import { z } from 'zod';
import type { ApiClient } from '../api-client.js';
import type { Page } from '../paging.js';
import type { ListPeekHandler } from '../list-peek.js';
import type { QueryParams } from '../query-string.js';
import {
  auditRecordSchema,
  chargeCodeSchema,
  loadDocumentSchema,
  loadSchema,
  uploadedDocumentSchema,
  type AuditRecord,
  type ChargeCode,
  type Load,
  type LoadDocument,
  type UploadedDocument,
} from '../schemas/resources.js';
import { listCall, pathParam } from './list-call.js';

/** `GET /loads` query (spec §4.4.3); the documented names, plus any other parameter as given. */
export type LoadListQuery = QueryParams & {
  skip?: number;
  limit?: number;
  /** Main: object such as `{ updatedAt: 1 }`; brokerage: `asc` or `desc`. */
  sortBy?: Record<string, 1 | -1> | 'asc' | 'desc';
  reference_numbers?: string[];
  status?: string[];
  searchTerm?: string;
  containerNo?: string;
  caller?: string[];
  isIncludeDeleted?: boolean;
  isDeleted?: boolean;
  updatedAtFrom?: string;
  updatedAtTo?: string;
  createdAtFrom?: string;
  createdAtTo?: string;
  updatedFrom?: string;
  updatedTo?: string;
  includeChargeSets?: boolean;
  includeVendorPay?: boolean;
};

export function listLoads(client: ApiClient, query: LoadListQuery, signal?: AbortSignal, peek?: ListPeekHandler): Promise<Page<Load>> {
  return listCall(client, '/loads', query, loadSchema, { signal, ...(peek ? { peek } : {}) });
}

export async function getLoad(
  client: ApiClient,
  referenceNumber: string,
  options: { includeChargeSets?: boolean; includeVendorPay?: boolean } = {},
  signal?: AbortSignal,
): Promise<Load> {
  const query: QueryParams = client.variant === 'main' ? { ...options } : {};
  const result = await client.call({
    method: 'GET',
    route: '/loads/:reference_number',
    path: `/loads/${pathParam(referenceNumber)}`,
    query,
    schema: loadSchema,
    signal,
  });
  return result.data;
}

/** `POST /loads` (spec §4.4.1). Not idempotent: never retried after an ambiguous failure. */
export async function createLoad(client: ApiClient, body: Record<string, unknown>, signal?: AbortSignal): Promise<Load> {
  const result = await client.call({ method: 'POST', route: '/loads', body, schema: loadSchema, signal });
  return result.data;
}

/** `PUT /loads?reference_number=` (spec §4.4.2). */
export async function updateLoad(
  client: ApiClient,
  referenceNumber: string,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Load> {
  const result = await client.call({
    method: 'PUT',
    route: '/loads',
    query: { reference_number: referenceNumber },
    body,
    schema: loadSchema,
    signal,
  });
  return result.data;
}

/**
 * `DELETE /loads/<id>` by the load's `_id`. `idempotent: false` (outbound) leaves a lost answer
 * to the caller instead of retrying: a repeat answers 404/410, which only the caller can read as
 * "done by the first attempt".
 */
export async function deleteLoad(client: ApiClient, loadId: string, signal?: AbortSignal, options: { idempotent?: boolean } = {}): Promise<Load> {
  const result = await client.call({
    method: 'DELETE',
    route: '/loads/:id',
    path: `/loads/${pathParam(loadId)}`,
    schema: loadSchema,
    signal,
    ...(options.idempotent !== undefined ? { idempotent: options.idempotent } : {}),
  });
  return result.data;
}

/** Main: `PUT /load-status/<reference_number>` with `PENDING` or `AVAILABLE` (spec §3.4). */
export async function changeLoadStatus(
  client: ApiClient,
  referenceNumber: string,
  status: 'PENDING' | 'AVAILABLE',
  signal?: AbortSignal,
): Promise<Load> {
  const result = await client.call({
    method: 'PUT',
    route: '/load-status/:reference_number',
    path: `/load-status/${pathParam(referenceNumber)}`,
    body: { status },
    schema: loadSchema,
    variants: ['main'],
    signal,
  });
  return result.data;
}

/** Brokerage change-status parameters (spec §4.4.4). */
export interface BrokerageStatusChange {
  reference_number: string;
  routingOrderId?: string;
  arrivedOrDeparted?: 'arrived' | 'departed';
  date?: string;
  completeLoad?: boolean;
  strictChange?: boolean;
  status?: string;
  chassisNo?: string;
  containerNo?: string;
  notes?: string;
  timeOfStatus?: string;
  isPrePullCharge?: boolean;
  billingDate?: string;
  isCombined?: boolean;
  loads?: unknown[];
  isSubCustomer?: boolean;
  additionalIds?: unknown[];
}

/**
 * Brokerage: `PUT /load-status/`. The spec does not say whether the parameters travel in the
 * path, query or body; they are sent in the JSON body, with `reference_number` also in the query.
 */
export async function changeLoadStatusBrokerage(
  client: ApiClient,
  change: BrokerageStatusChange,
  signal?: AbortSignal,
): Promise<Load> {
  const result = await client.call({
    method: 'PUT',
    route: '/load-status/',
    query: { reference_number: change.reference_number },
    body: change,
    schema: loadSchema,
    variants: ['brokerage'],
    signal,
  });
  return result.data;
}

export interface DocumentUpload {
  referenceNumber: string;
  /** Exactly one of the upload names of spec §2.7. */
  documentType: string;
  fileName: string;
  content: Uint8Array;
  contentType?: string;
  /** Only for sub-customer loads. */
  customerId?: string;
}

/** `POST /loads/document` (multipart). Not idempotent: a retry could attach the file twice. */
export async function uploadLoadDocument(client: ApiClient, upload: DocumentUpload, signal?: AbortSignal): Promise<UploadedDocument> {
  const form = new FormData();
  form.append('reference_number', upload.referenceNumber);
  form.append('documentType', upload.documentType);
  if (upload.customerId) form.append('customerId', upload.customerId);
  form.append('file', new Blob([upload.content], { type: upload.contentType ?? 'application/octet-stream' }), upload.fileName);
  const result = await client.call({ method: 'POST', route: '/loads/document', body: form, schema: uploadedDocumentSchema, signal });
  return result.data;
}

/** `GET /load-document-type`: the document type names (spec §2.7). */
export async function listLoadDocumentTypes(client: ApiClient, signal?: AbortSignal): Promise<string[]> {
  const result = await client.call({ method: 'GET', route: '/load-document-type', schema: z.array(z.string()), signal });
  return result.data;
}

/** `GET /load-document/?reference_number=&doc_type=`. */
export async function listLoadDocuments(
  client: ApiClient,
  referenceNumber: string,
  documentType: string,
  signal?: AbortSignal,
): Promise<LoadDocument[]> {
  const result = await client.call({
    method: 'GET',
    route: '/load-document/',
    query: { reference_number: referenceNumber, doc_type: documentType },
    schema: z.array(loadDocumentSchema),
    signal,
  });
  return result.data;
}

/** Main: `GET /get-charge-codes`. */
export async function listChargeCodes(client: ApiClient, signal?: AbortSignal): Promise<Page<ChargeCode>> {
  return listCall(client, '/get-charge-codes', {}, chargeCodeSchema, { signal, variants: ['main'] });
}

/** Audit query (spec §4.4 `/audit/load`, §4.7 `/audit/customer`): both bounds required. */
export type AuditQuery = QueryParams & {
  createdAtFrom: string;
  createdAtTo: string;
  action?: string;
  entityId?: string;
  actorIds?: string[];
  limit?: number;
  pageToken?: string;
};

/** Main: `GET /audit/load`, paged by `pageToken`. */
export function listLoadAudits(client: ApiClient, query: AuditQuery, signal?: AbortSignal): Promise<Page<AuditRecord>> {
  return listCall(client, '/audit/load', query, auditRecordSchema, { signal, variants: ['main'] });
}
