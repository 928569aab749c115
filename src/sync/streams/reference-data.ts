import { listChargeCodes, listLoadDocumentTypes } from '../../api/endpoints/loads.js';
import type { RawRecord } from '../stream-definition.js';
import { requireKey } from './common.js';
import { snapshotStream } from './snapshot-stream.js';

/** Main: charge codes (`GET /get-charge-codes`), whole list each run; removals as tombstones. */
export const chargeCodesStream = snapshotStream({
  name: 'chargeCodes',
  description: 'Charge codes (GET /get-charge-codes, main)',
  variants: ['main'],
  keyDescription: '_id (else value, name)',
  key: (record: RawRecord) => requireKey('chargeCodes', record, '_id', 'value', 'name'),
  fetchAll: async (env, signal) => {
    const page = await listChargeCodes(env.client, signal);
    return { items: page.items as RawRecord[], rejected: page.rejected };
  },
});

/** Load document type names (`GET /load-document-type`); each delivered as `{ name }`. */
export const loadDocumentTypesStream = snapshotStream({
  name: 'loadDocumentTypes',
  description: 'Load document types (GET /load-document-type)',
  variants: ['main', 'brokerage'],
  keyDescription: 'name',
  key: (record: RawRecord) => requireKey('loadDocumentTypes', record, 'name'),
  fetchAll: async (env, signal) => ({ items: (await listLoadDocumentTypes(env.client, signal)).map((name) => ({ name })), rejected: [] }),
});
