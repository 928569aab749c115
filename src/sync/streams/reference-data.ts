import { listChargeCodes, listLoadDocumentTypes } from '../../api/endpoints/loads.js';
import type { RawRecord, StreamDefinition } from '../stream-definition.js';
import { readSnapshot, snapshotCursorSchema, type SnapshotCursor } from '../strategies/snapshot.js';
import { noOptions, requireKey, upsertOrRemovedOp } from './common.js';

const chargeCodeKey = (record: RawRecord) => requireKey('chargeCodes', record, '_id', 'value', 'name');

/** Main: charge codes (`GET /get-charge-codes`), whole list each run; removals as tombstones. */
export const chargeCodesStream: StreamDefinition<SnapshotCursor, Record<string, never>> = {
  name: 'chargeCodes',
  description: 'Charge codes (GET /get-charge-codes, main)',
  variants: ['main'],
  pagedEndpoint: null,
  optionsSchema: noOptions,
  cursorSchema: snapshotCursorSchema,
  cursorKind: 'snapshot',
  key: chargeCodeKey,
  op: upsertOrRemovedOp,
  updatedAt: () => null,
  resetCursor: () => null,
  read: (env, _cursor, _plan, signal) =>
    readSnapshot(
      'chargeCodes',
      async (s) => {
        const page = await listChargeCodes(env.client, s);
        return { items: page.items as RawRecord[], rejected: page.rejected };
      },
      chargeCodeKey,
      env,
      signal,
    ),
};

const documentTypeKey = (record: RawRecord) => requireKey('loadDocumentTypes', record, 'name');

/** Load document type names (`GET /load-document-type`); each delivered as `{ name }`. */
export const loadDocumentTypesStream: StreamDefinition<SnapshotCursor, Record<string, never>> = {
  name: 'loadDocumentTypes',
  description: 'Load document types (GET /load-document-type)',
  variants: ['main', 'brokerage'],
  pagedEndpoint: null,
  optionsSchema: noOptions,
  cursorSchema: snapshotCursorSchema,
  cursorKind: 'snapshot',
  key: documentTypeKey,
  op: upsertOrRemovedOp,
  updatedAt: () => null,
  resetCursor: () => null,
  read: (env, _cursor, _plan, signal) =>
    readSnapshot(
      'loadDocumentTypes',
      async (s) => ({ items: (await listLoadDocumentTypes(env.client, s)).map((name) => ({ name })), rejected: [] }),
      documentTypeKey,
      env,
      signal,
    ),
};
