import { describe, expect, it } from 'vitest';
import { Collection, type CollectionQuery, type Rec } from '../../src/simulator/collection.js';
import { Prng } from '../../src/simulator/prng.js';

/** Base: 1000 records, keys non-decreasing with many ties. */
function makeCollection(compact = false) {
  const key = (p: number) => Math.floor(p / 7) * 1000;
  return new Collection<Rec>({
    ...(compact ? { compact: { summarize: (r: Rec) => ({ ...r }) } } : {}),
    name: 't',
    baseCount: 1000,
    id: (p) => p.toString(16).padStart(8, '0'),
    generate: (p) => ({ _id: p.toString(16).padStart(8, '0'), t: key(p), tag: p % 3 === 0 ? 'a' : 'b' }),
    baseKeys: { t: key },
    recordKey: (r, field) => r[field] as number,
  });
}

function brute(c: Collection<Rec>, q: CollectionQuery<Rec>): Rec[] {
  const all: Rec[] = [];
  for (let p = 0; p < c.size; p++) {
    const r = c.get(p);
    if (!r) continue;
    const overlaid = c.isOverlaid(p);
    if (!overlaid && q.baseNone) continue;
    if (!overlaid && q.basePredicate && !q.basePredicate(p)) continue;
    if (!overlaid && q.baseCandidates && !q.baseCandidates.includes(p)) continue;
    if (overlaid && q.overlayPredicate && !q.overlayPredicate(r)) continue;
    const k = r['t'] as number;
    if (q.ranges.some((range) => (range.from !== undefined && k < range.from) || (range.to !== undefined && k > range.to))) continue;
    all.push(r);
  }
  all.sort((a, b) => (a['t'] as number) - (b['t'] as number) || String(a['_id']).localeCompare(String(b['_id'])));
  if (q.desc) all.reverse();
  return all.slice(q.skip, q.skip + q.limit);
}

describe('Collection (lazy base + overlay)', () => {
  for (const compact of [false, true]) it(`pages exactly like a brute-force sort under random overlay changes (compact: ${compact})`, () => {
    const c = makeCollection(compact);
    const rng = new Prng(42);
    for (let round = 0; round < 40; round++) {
      // Mutate: move records to new keys (incl. equal keys = ties), create new ones.
      for (let i = 0; i < 15; i++) {
        if (rng.chance(0.2)) {
          const p = c.allocate();
          c.put(p, { _id: p.toString(16).padStart(8, '0'), t: rng.int(150) * 1000, tag: 'b', created: true });
        } else {
          const p = rng.int(c.size);
          c.put(p, { ...(c.get(p) as Rec), t: rng.int(150) * 1000, tag: rng.chance(0.5) ? 'a' : 'b' });
        }
      }
      for (let probe = 0; probe < 10; probe++) {
        const from = rng.chance(0.5) ? rng.int(100) * 1000 : undefined;
        const to = rng.chance(0.5) ? (from ?? 0) + rng.int(80) * 1000 : undefined;
        const q: CollectionQuery<Rec> = {
          sortField: 't',
          desc: rng.chance(0.5),
          ranges: [{ field: 't', ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) }],
          skip: rng.int(300),
          limit: 1 + rng.int(60),
        };
        const variant = rng.int(4);
        if (variant === 1) {
          q.basePredicate = (p) => p % 3 === 0;
          q.baseFilterKey = 'tag-a';
          q.overlayPredicate = (r) => r['tag'] === 'a';
        } else if (variant === 2) {
          q.baseCandidates = [rng.int(1000), rng.int(1000), rng.int(1000), 5, 6];
          q.overlayPredicate = () => false;
        } else if (variant === 3) {
          q.baseNone = true;
        }
        const expected = brute(c, q).map((r) => r['_id']);
        const actual = c.query(q).items.map((r) => r['_id']);
        expect(actual).toEqual(expected);
      }
    }
    const sample = c.get(3) as Rec;
    expect(c.get(3)).toEqual(sample);
  });

  it('reports the total of matching records and reads overlay values over base values', () => {
    const c = makeCollection();
    c.put(3, { _id: '00000003', t: 999_000, tag: 'z' });
    const result = c.query({ sortField: 't', desc: false, ranges: [], skip: 0, limit: 5 });
    expect(result.total).toBe(1000);
    expect(result.items.map((r) => r['_id'])).toEqual(['00000000', '00000001', '00000002', '00000004', '00000005']);
    const last = c.query({ sortField: 't', desc: true, ranges: [], skip: 0, limit: 1 });
    expect(last.items[0]).toMatchObject({ _id: '00000003', tag: 'z' });
  });
});
