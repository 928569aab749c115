import { describe, expect, it } from 'vitest';
import type { DatasetContext } from '../../src/simulator/dataset/context.js';
import {
  billedCount,
  containerNoOf,
  invoicePositionOfLoad,
  isBilledBase,
  loadOfInvoicePosition,
  positionOfReference,
  positionsForTerm,
  positionsOfContainer,
  referenceNumberOf,
} from '../../src/simulator/dataset/loads.js';
import { Timeline } from '../../src/simulator/timeline.js';
import { QueryParams, parseDateParam } from '../../src/simulator/query-params.js';
import { makeId, parseId } from '../../src/simulator/ids.js';

function ctx(variant: 'main' | 'brokerage', loads = 1_000_000): DatasetContext {
  const t = new Timeline(10, 1, 0, 1000);
  return { variant, seed: 5, counts: { loads, customers: 10, consignees: 10, bills: 10, supportMoves: 10 }, timelines: { loads: t, customers: t, consignees: t, bills: t, supportMoves: t } };
}

describe('generated key fields are invertible', () => {
  it('reference numbers round-trip, every 997th contains a slash, variants differ', () => {
    const main = ctx('main');
    for (const p of [0, 1, 995, 996, 997, 123_456, 999_999]) expect(positionOfReference(main, referenceNumberOf(main, p))).toBe(p);
    expect(referenceNumberOf(main, 996)).toContain('/');
    expect(referenceNumberOf(main, 995)).not.toContain('/');
    expect(positionOfReference(main, 'M00000997')).toBeUndefined(); // the slash form is the real one
    expect(referenceNumberOf(ctx('brokerage'), 0)).not.toBe(referenceNumberOf(main, 0));
  });

  it('container numbers and search terms find their loads without scanning', () => {
    const c = ctx('main');
    for (const p of [0, 7, 500_000, 999_999]) {
      expect(positionsOfContainer(c, containerNoOf(c, p))).toEqual([p]);
      expect(positionsForTerm(c, containerNoOf(c, p))).toContain(p);
      expect(positionsForTerm(c, `SR${String(p + 1).padStart(8, '0')}`)).toEqual([p]);
    }
    const all = new Set<string>();
    for (let p = 0; p < 20_000; p++) all.add(containerNoOf(c, p));
    expect(all.size).toBe(20_000);
  });

  it('billed loads map to invoice positions and back', () => {
    let j = 0;
    for (let p = 0; p < 1000; p++) {
      if (!isBilledBase(p)) continue;
      expect(invoicePositionOfLoad(p)).toBe(j);
      expect(loadOfInvoicePosition(j)).toBe(p);
      j++;
    }
    for (let n = 0; n < 30; n++) {
      let count = 0;
      for (let p = 0; p < n; p++) if (isBilledBase(p)) count++;
      expect(billedCount(n)).toBe(count);
    }
  });
});

describe('timeline', () => {
  it('is monotonic and has tie groups of several records', () => {
    const t = new Timeline(10_000, 3, Date.parse('2024-01-01'), Date.parse('2024-06-01'));
    let ties = 0;
    let run = 1;
    for (let p = 1; p < 10_000; p++) {
      expect(t.updatedAtMs(p)).toBeGreaterThanOrEqual(t.updatedAtMs(p - 1));
      expect(t.createdAtMs(p)).toBeLessThanOrEqual(t.updatedAtMs(p));
      if (t.updatedAtMs(p) === t.updatedAtMs(p - 1)) run++;
      else {
        if (run >= 3) ties++;
        run = 1;
      }
    }
    expect(ties).toBeGreaterThan(300);
    expect(t.updatedAtMs(9_999)).toBeLessThanOrEqual(Date.parse('2024-06-01'));
  });
});

describe('ids', () => {
  it('sort like positions and parse back', () => {
    expect(makeId(1, 2, 9) < makeId(1, 2, 10)).toBe(true);
    expect(parseId(1, 2, makeId(1, 2, 123_456))).toBe(123_456);
    expect(parseId(1, 3, makeId(1, 2, 5))).toBeUndefined();
  });
});

describe('query decoding', () => {
  it('accepts repeated keys, key[] and single values as arrays, without splitting commas', () => {
    expect(new QueryParams('status=A&status=B').array('status')).toEqual(['A', 'B']);
    expect(new QueryParams('status[]=A&status[]=B').array('status')).toEqual(['A', 'B']);
    expect(new QueryParams('status=A').array('status')).toEqual(['A']);
    expect(new QueryParams('status=A,B').array('status')).toEqual(['A,B']);
    expect(new QueryParams('status=%5B%22A%22%5D').array('status')).toEqual(['A']);
  });

  it('accepts JSON and bracket sortBy, and strict booleans', () => {
    expect(new QueryParams(`sortBy=${encodeURIComponent('{"updatedAt":1}')}`).object('sortBy')).toEqual({ updatedAt: '1' });
    expect(new QueryParams('sortBy[updatedAt]=-1').object('sortBy')).toEqual({ updatedAt: '-1' });
    expect(new QueryParams('isDeleted=true').boolean('isDeleted')).toBe(true);
    expect(new QueryParams('isDeleted=false').boolean('isDeleted')).toBe(false);
    expect(() => new QueryParams('isDeleted=1').boolean('isDeleted')).toThrow(/isDeleted/);
    expect(() => new QueryParams('limit=abc').integer('limit')).toThrow(/limit/);
  });

  it('treats a date-only upper bound as the whole day', () => {
    expect(parseDateParam('x', '2024-03-01', true)).toBe(Date.parse('2024-03-01T23:59:59.999Z'));
    expect(parseDateParam('x', '2024-03-01', false)).toBe(Date.parse('2024-03-01T00:00:00.000Z'));
    expect(() => parseDateParam('updatedTo', 'yesterday', true)).toThrow(/updatedTo/);
  });
});
