import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mapBatch, parseMapping } from '../../src/mapping/index.js';
import { contentHash } from '../../src/sync/content-hash.js';
import { batchOf, record } from '../helpers/records.js';

/** The hash as every earlier release computed it: state databases hold these, so it must not change. */
const legacyHash = (op: string, data: unknown) => crypto.createHash('sha1').update(`${op}\u0000${JSON.stringify(data) ?? 'null'}`).digest('base64url');

const mappingWith = (rawOmit: string[]) =>
  parseMapping('loads', { table: 'loads', key: ['record_key'], includeRaw: true, rawOmit, columns: [{ name: 'record_key', path: '$key' }] });

describe('each record serialised once for the content hash and `_raw`', () => {
  const data = { reference_number: 'M1', nested: { secret: 'x', list: [1, 'two', null] }, 'quote"key': 'é🚚' };

  it('keeps the content hash of earlier releases, for records and for other values', () => {
    for (const value of [data, { ...data }, [1, 2], 'text', null, undefined, 42]) {
      expect(contentHash('upsert', value)).toBe(legacyHash('upsert', value));
    }
  });

  it('stores the same `_raw` text whether or not the record was hashed first', () => {
    const hashedFirst = { ...data };
    contentHash('upsert', hashedFirst);
    for (const subject of [hashedFirst, { ...data }]) {
      const { batch } = mapBatch(batchOf('loads', 'b1', [record('loads', 'M1', subject)]), mappingWith([]));
      expect(batch.tables[0]!.rows[0]!._raw).toBe(JSON.stringify(data));
    }
  });

  it('never reuses the full text where `rawOmit` removes fields', () => {
    const hashed = { ...data };
    contentHash('upsert', hashed);
    const { batch } = mapBatch(batchOf('loads', 'b1', [record('loads', 'M1', hashed)]), mappingWith(['nested.secret']));
    expect(batch.tables[0]!.rows[0]!._raw).toBe(JSON.stringify({ reference_number: 'M1', nested: { list: [1, 'two', null] }, 'quote"key': 'é🚚' }));
    expect(hashed.nested.secret).toBe('x');
  });
});
