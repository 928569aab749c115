import { describe, expect, it } from 'vitest';
import { findCreatedLoad, findUploadedDocument, reconcileKey } from '../../src/outbound/reconcile.js';
import { FakeApi } from '../helpers/fake-api.js';

/**
 * Look-ups after an ambiguous POST (design §3), against a scripted fake `GET /loads` and
 * `GET /load-document/`. The search (`searchTerm`) matches substrings and other fields, so the
 * code must compare each record exactly; a look-alike created before our first send is not ours.
 */
const SENT_AT = '2024-06-01T12:00:00.000Z';
const signal = new AbortController().signal;

function load(ref: string, extra: Record<string, unknown>): Record<string, unknown> {
  return { _id: `id-${ref}`, reference_number: ref, createdAt: '2024-06-01T12:00:01.000Z', ...extra };
}

function pagesOf(pages: Array<Array<Record<string, unknown>>>): FakeApi {
  return new FakeApi('main').on('GET /loads', (_c, n) => ({ data: pages[n] ?? [] }));
}

const body = { secondaryReferenceNo: 'ERP-1', caller: 'C1' };

describe('reconcileKey', () => {
  it('names the field the configured strategy searches by, or nothing when the body lacks it', () => {
    expect(reconcileKey(body, 'secondaryReferenceNo')).toEqual({ field: 'secondaryReferenceNo', value: 'ERP-1' });
    expect(reconcileKey({ containerNo: 'MSCU1' }, 'containerNo+caller')).toEqual({ field: 'containerNo', value: 'MSCU1' });
    expect(reconcileKey({ secondaryReferenceNo: '' }, 'secondaryReferenceNo')).toBeUndefined();
    expect(reconcileKey(body, 'containerNo+caller')).toBeUndefined();
  });
});

describe('findCreatedLoad', () => {
  it('takes only exact matches of the search term (not substrings or other fields)', async () => {
    const api = pagesOf([[load('L-10', { secondaryReferenceNo: 'ERP-10' }), load('L-X', { containerNo: 'ERP-1' }), load('L-1', { secondaryReferenceNo: 'ERP-1' })]]);
    const found = await findCreatedLoad(api.asClient(), body, 'secondaryReferenceNo', SENT_AT, signal);
    expect(found).toEqual({ found: { referenceNumber: 'L-1', loadId: 'id-L-1' }, matches: 1 });
    expect(api.calls[0]!.query).toEqual({ skip: 0, limit: 50, isIncludeDeleted: true, searchTerm: 'ERP-1' });
  });

  it('rejects a match of another caller, accepts the caller as id or embedded object', async () => {
    const api = pagesOf([[load('L-other', { secondaryReferenceNo: 'ERP-1', caller: { _id: 'C2' } }), load('L-obj', { secondaryReferenceNo: 'ERP-1', caller: { _id: 'C1' } })]]);
    expect(await findCreatedLoad(api.asClient(), body, 'secondaryReferenceNo', SENT_AT, signal)).toMatchObject({ found: { referenceNumber: 'L-obj' }, matches: 1 });
    const api2 = pagesOf([[load('L-str', { secondaryReferenceNo: 'ERP-1', caller: 'C1' })]]);
    expect(await findCreatedLoad(api2.asClient(), body, 'secondaryReferenceNo', SENT_AT, signal)).toMatchObject({ found: { referenceNumber: 'L-str' } });
  });

  it('ignores a look-alike created before the first send (minus five minutes of clock slack)', async () => {
    const api = pagesOf([
      [
        load('L-old', { secondaryReferenceNo: 'ERP-1', createdAt: '2024-06-01T11:54:59.000Z' }),
        load('L-slack', { secondaryReferenceNo: 'ERP-1', createdAt: '2024-06-01T11:55:01.000Z' }),
      ],
    ]);
    expect(await findCreatedLoad(api.asClient(), body, 'secondaryReferenceNo', SENT_AT, signal)).toEqual({ found: { referenceNumber: 'L-slack', loadId: 'id-L-slack' }, matches: 1 });
    // Without a send time nothing is excluded by age.
    const api2 = pagesOf([[load('L-old', { secondaryReferenceNo: 'ERP-1', createdAt: '2020-01-01T00:00:00.000Z' })]]);
    expect(await findCreatedLoad(api2.asClient(), body, 'secondaryReferenceNo', null, signal)).toMatchObject({ found: { referenceNumber: 'L-old' } });
  });

  it('with several matches takes the last listed (the API lists newest first) and reports how many', async () => {
    const api = pagesOf([[load('L-new', { secondaryReferenceNo: 'ERP-1' }), load('L-first', { secondaryReferenceNo: 'ERP-1' })]]);
    expect(await findCreatedLoad(api.asClient(), body, 'secondaryReferenceNo', SENT_AT, signal)).toEqual({ found: { referenceNumber: 'L-first', loadId: 'id-L-first' }, matches: 2 });
  });

  it('pages until a short page', async () => {
    const filler = Array.from({ length: 50 }, (_, i) => load(`F${i}`, { secondaryReferenceNo: `ERP-1${i}` }));
    const api = pagesOf([filler, [load('L-1', { secondaryReferenceNo: 'ERP-1' })]]);
    expect(await findCreatedLoad(api.asClient(), body, 'secondaryReferenceNo', SENT_AT, signal)).toMatchObject({ found: { referenceNumber: 'L-1' } });
    expect(api.calls.map((c) => c.query.skip)).toEqual([0, 50]);
  });

  it('stops after 20 pages of a search that is not selective', async () => {
    const filler = Array.from({ length: 50 }, (_, i) => load(`F${i}`, { secondaryReferenceNo: 'other' }));
    const api = new FakeApi('main').on('GET /loads', () => ({ data: filler }));
    expect(await findCreatedLoad(api.asClient(), body, 'secondaryReferenceNo', SENT_AT, signal)).toEqual({ found: null });
    expect(api.calls).toHaveLength(20);
  });

  it('searches by containerNo with the caller filter when configured', async () => {
    const api = pagesOf([[load('L-C', { containerNo: 'MSCU1', caller: 'C1' })]]);
    const found = await findCreatedLoad(api.asClient(), { containerNo: 'MSCU1', caller: 'C1' }, 'containerNo+caller', SENT_AT, signal);
    expect(found).toMatchObject({ found: { referenceNumber: 'L-C' } });
    expect(api.calls[0]!.query).toEqual({ skip: 0, limit: 50, isIncludeDeleted: true, containerNo: 'MSCU1', caller: ['C1'] });
  });

  it('finds a load our create made that someone deleted since (the list hides deleted loads unless asked)', async () => {
    // As the API does: deleted loads are listed only with isIncludeDeleted.
    const created = load('L-1', { secondaryReferenceNo: 'ERP-1', isDeleted: true });
    const api = new FakeApi('main').on('GET /loads', (call) => ({ data: call.query['isIncludeDeleted'] === true ? [created] : [] }));
    expect(await findCreatedLoad(api.asClient(), body, 'secondaryReferenceNo', SENT_AT, signal)).toEqual({
      found: { referenceNumber: 'L-1', loadId: 'id-L-1', deleted: true },
      matches: 1,
    });
  });

  it('refuses to search without the identifier', async () => {
    await expect(findCreatedLoad(new FakeApi('main').asClient(), { caller: 'C1' }, 'secondaryReferenceNo', SENT_AT, signal)).rejects.toThrow('carries no secondaryReferenceNo');
  });

  it('reports nothing found when no record matches', async () => {
    expect(await findCreatedLoad(pagesOf([[]]).asClient(), body, 'secondaryReferenceNo', SENT_AT, signal)).toEqual({ found: null });
  });
});

describe('findUploadedDocument', () => {
  function docs(list: Array<{ type: string; url: string }>): FakeApi {
    return new FakeApi('main').on('GET /load-document/', () => ({ data: list }));
  }

  it('recognises the upload by its file name in the URL, raw or encoded', async () => {
    const api = docs([{ type: 'Other', url: 'https://f/a.pdf' }, { type: 'Other', url: 'https://f/pod%201.pdf' }]);
    expect(await findUploadedDocument(api.asClient(), 'L-1', 'Other', 'pod 1.pdf', undefined, signal)).toBe('https://f/pod%201.pdf');
    expect(api.calls[0]!.query).toEqual({ reference_number: 'L-1', doc_type: 'Other' });
    expect(await findUploadedDocument(docs([{ type: 'Other', url: 'https://f/x/pod.pdf' }]).asClient(), 'L-1', 'Other', 'pod.pdf', undefined, signal)).toBe('https://f/x/pod.pdf');
  });

  it('otherwise by more documents of the type than before the first attempt', async () => {
    const api = docs([{ type: 'Other', url: 'https://f/1' }, { type: 'Other', url: 'https://f/2' }]);
    expect(await findUploadedDocument(api.asClient(), 'L-1', 'Other', 'renamed.pdf', 1, signal)).toBe('https://f/2');
    expect(await findUploadedDocument(api.asClient(), 'L-1', 'Other', 'renamed.pdf', 2, signal)).toBeNull();
    expect(await findUploadedDocument(api.asClient(), 'L-1', 'Other', 'renamed.pdf', undefined, signal)).toBeNull();
  });
});
