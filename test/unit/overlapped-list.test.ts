import { describe, expect, it } from 'vitest';
import type { Page } from '../../src/api/paging.js';
import { contentHash } from '../../src/sync/content-hash.js';
import type { RawRecord } from '../../src/sync/stream-definition.js';
import { readOverlappedList } from '../../src/sync/strategies/overlapped-list.js';
import { readSnapshot, REMOVED_MARKER } from '../../src/sync/strategies/snapshot.js';
import { collect, snapshotEnv } from '../helpers/strategy-fakes.js';

/**
 * A whole list read in pages that overlap by one entry (src/sync/strategies/overlapped-list.ts):
 * every entry once, in as many requests as plain paging for the lists the API has, and a read
 * that proves no entry slid past a page boundary — so a removal it shows needs no second read
 * (issue 14: a customer-rates pass that removed a rate read the list twice, 6 requests for 3).
 */
const key = (record: RawRecord) => String(record._id);
const ids = (n: number) => Array.from({ length: n }, (_, i) => `r${String(i).padStart(3, '0')}`);

/** A list endpoint over `list` (mutable), answering skip/limit slices and counting requests. */
function endpoint(list: string[], beforeAnswer?: (request: number) => void) {
  let requests = 0;
  return {
    fetch: async (skip: number, limit: number): Promise<Page<RawRecord>> => {
      requests += 1;
      beforeAnswer?.(requests);
      return { items: list.slice(skip, skip + limit).map((_id) => ({ _id })), rejected: [], skip, envelope: {} as Page<RawRecord>['envelope'] };
    },
    requests: () => requests,
  };
}

const signal = new AbortController().signal;

describe('readOverlappedList', () => {
  it.each([
    [0, 1],
    [49, 1],
    [50, 2],
    [120, 3],
    [121, 3],
    [147, 3],
  ])('reads a list of %i entries whole, each once, in %i requests, and proves it', async (n, requests) => {
    const list = ids(n);
    const api = endpoint(list);
    const read = await readOverlappedList(api.fetch, key, 50, signal);
    expect(read.items.map(key)).toEqual(list);
    expect(api.requests()).toBe(requests);
    expect(read.pages).toBe(requests);
    expect(read.consistent).toBe(true);
  });

  it('notices an entry removed before a page boundary while the list is paged (the entry after it would be skipped)', async () => {
    const list = ids(120);
    // Between the first and the second request, an entry of the first page is removed: every
    // later entry moves one offset down, and r050 — first of the unread part — lands on offset 49.
    const api = endpoint(list, (request) => {
      if (request === 2) list.splice(10, 1);
    });
    const read = await readOverlappedList(api.fetch, key, 50, signal);
    expect(read.consistent).toBe(false);
  });

  it('notices an entry added before a page boundary while the list is paged', async () => {
    const list = ids(120);
    const api = endpoint(list, (request) => {
      if (request === 3) list.splice(0, 0, 'new');
    });
    const read = await readOverlappedList(api.fetch, key, 50, signal);
    expect(read.consistent).toBe(false);
  });

  it('stays proven when entries after the part read are added or removed', async () => {
    const list = ids(120);
    const api = endpoint(list, (request) => {
      if (request === 2) list.splice(110, 1);
      if (request === 3) list.push('late');
    });
    const read = await readOverlappedList(api.fetch, key, 50, signal);
    expect(read.consistent).toBe(true);
    expect(read.items.map(key)).toEqual(list);
  });
});

describe('readSnapshot with an overlapped read', () => {
  const tombstone = (k: string) => ({ [REMOVED_MARKER]: true, key: k });
  const knownEnv = (known: string[]) => snapshotEnv(new Map(known.map((k) => [k, 'some-hash'])));

  it('tombstones an entry a proven read misses without reading the list again', async () => {
    const known = ids(121);
    const list = known.filter((k) => k !== 'r060');
    const api = endpoint(list);
    const chunks = await collect(readSnapshot('customerRates', (s) => readOverlappedList(api.fetch, key, 50, s), key, knownEnv(known), signal));
    expect(chunks[0]!.records.filter((r) => r[REMOVED_MARKER] === true)).toEqual([tombstone('r060')]);
    expect(api.requests()).toBe(3);
    expect(chunks[0]!.pages).toBe(3);
    expect(contentHash('delete', tombstone('r060'))).not.toBe('some-hash');
  });

  it('reads again when the read that misses an entry is not proven, and tombstones nothing the second read has', async () => {
    // While the first read pages, r010 and r011 are moved to the end (edits that reorder): r050
    // slides two offsets down, past the boundary, and the first read misses it.
    const known = ids(120);
    const list = [...known];
    const api = endpoint(list, (request) => {
      if (request === 2) list.push(...list.splice(10, 2));
    });
    const chunks = await collect(readSnapshot('customerRates', (s) => readOverlappedList(api.fetch, key, 50, s), key, knownEnv(known), signal));
    expect(chunks[0]!.records.filter((r) => r[REMOVED_MARKER] === true)).toEqual([]);
    expect(new Set(chunks[0]!.records.map(key))).toEqual(new Set(known));
    expect(api.requests()).toBe(6);
  });

  it('confirms a removal seen by an unproven read with a second read', async () => {
    const known = ids(120);
    const list = [...known];
    // Before the second request, r010 (already read) and r060 (not yet) are removed: the read
    // misses r060 and its second boundary does not match.
    const api = endpoint(list, (request) => {
      if (request === 2) {
        list.splice(60, 1);
        list.splice(10, 1);
      }
    });
    const chunks = await collect(readSnapshot('customerRates', (s) => readOverlappedList(api.fetch, key, 50, s), key, knownEnv(known), signal));
    expect(chunks[0]!.records.filter((r) => r[REMOVED_MARKER] === true)).toEqual([tombstone('r010'), tombstone('r060')]);
    expect(api.requests()).toBe(6);
  });
});
