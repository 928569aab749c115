import { compareStrings, insertSortedNum, lowerBound, lowerBoundNum } from './sorted.js';

/**
 * A collection = lazily generated base records (positions 0..baseCount-1, never stored) plus an
 * overlay holding every record that was changed, created or deleted. The overlay keeps one sorted
 * index per sort key, and base keys are non-decreasing in position, so a page at any offset is a
 * k-th-element selection over two sorted sequences: O(log² n), no scan, for the common
 * "time range + sort" query even with a million records.
 */

export type Rec = Record<string, unknown>;

export interface CollectionConfig<T extends Rec, S = T> {
  name: string;
  baseCount: number;
  id(position: number): string;
  generate(position: number): T;
  /** Sort keys (ms) of base records; each must be non-decreasing in position. */
  baseKeys: Record<string, (position: number) => number>;
  /** The same keys read from a stored record. */
  recordKey(record: T, field: string): number;
  /** Keep up to this many generated base records (small collections embedded everywhere). */
  cacheGenerated?: number;
  /**
   * Store overlay records as a patch over the generated record plus a small summary that list
   * predicates read. Keeps a long mutator run over a million loads in bounded memory; a record is
   * rebuilt (generate + patch) only when it is returned. Needs `generate` to be pure.
   */
  compact?: { summarize(record: T): S };
}

interface StoredEntry<T, S> {
  record?: T;
  patch?: Partial<T>;
  summary: S;
  keys: Record<string, number>;
}

interface KeyEntry {
  k: number;
  id: string;
  p: number;
}

export interface RangeBound {
  field: string;
  /** Inclusive bounds in ms. */
  from?: number;
  to?: number;
}

export interface CollectionQuery<S> {
  sortField: string;
  desc: boolean;
  ranges: RangeBound[];
  /** Base records cannot match at all (e.g. "deleted only"). */
  baseNone?: boolean;
  /** Predicate over base positions; makes the base side a cached filtered array. */
  basePredicate?: (position: number) => boolean;
  /** Identifies basePredicate for caching (same string = same predicate). */
  baseFilterKey?: string;
  /** Explicit base positions (key lookups); replaces the range walk. */
  baseCandidates?: number[];
  /** Sees the record itself, or its summary when the collection is compact. */
  overlayPredicate?: (summary: S) => boolean;
  skip: number;
  limit: number;
}

export interface QueryResult<T> {
  items: T[];
  total: number;
}

/** A sorted sequence of base positions with random access. */
interface BaseSeq {
  size: number;
  at(i: number): number;
  /** Index of a position known to be in the sequence. */
  indexOf(position: number): number;
  has(position: number): boolean;
}

function rangeSeq(lo: number, hi: number): BaseSeq {
  return {
    size: Math.max(0, hi - lo),
    at: (i) => lo + i,
    indexOf: (p) => p - lo,
    has: (p) => p >= lo && p < hi,
  };
}

function arraySeq(array: ArrayLike<number>): BaseSeq {
  return {
    size: array.length,
    at: (i) => array[i] as number,
    indexOf: (p) => lowerBoundNum(array, p),
    has: (p) => array[lowerBoundNum(array, p)] === p,
  };
}

/** seq minus the (sorted) positions in `removed`, all of which are members of seq. */
function excludingSeq(seq: BaseSeq, removed: number[]): BaseSeq {
  if (removed.length === 0) return seq;
  const ranks = removed.map((p) => seq.indexOf(p));
  return {
    size: seq.size - removed.length,
    at: (j) => {
      // Smallest m with ranks[m] - m > j: m removed positions come before the answer.
      const m = lowerBound(0, ranks.length, (x) => (ranks[x] as number) - x > j);
      return seq.at(j + m);
    },
    indexOf: () => {
      throw new Error('not needed');
    },
    has: (p) => seq.has(p) && removed[lowerBoundNum(removed, p)] !== p,
  };
}

const FILTER_CACHE_SIZE = 12;

export class Collection<T extends Rec, S = T> {
  private readonly overlay = new Map<number, StoredEntry<T, S>>();
  /** Base positions present in the overlay, sorted. */
  private readonly overlaidBase: number[] = [];
  private readonly indexes = new Map<string, KeyEntry[]>();
  private readonly filterCache = new Map<string, Int32Array>();
  nextPosition: number;
  /** Bumped by every put; lets callers notice change. */
  version = 0;

  constructor(readonly config: CollectionConfig<T, S>) {
    this.nextPosition = config.baseCount;
    for (const field of Object.keys(config.baseKeys)) this.indexes.set(field, []);
  }

  get name(): string {
    return this.config.name;
  }

  get baseCount(): number {
    return this.config.baseCount;
  }

  /** Number of positions ever allocated (base + created). */
  get size(): number {
    return this.nextPosition;
  }

  exists(position: number): boolean {
    return Number.isInteger(position) && position >= 0 && position < this.nextPosition && (position < this.baseCount || this.overlay.has(position));
  }

  get(position: number): T | undefined {
    if (!this.exists(position)) return undefined;
    const entry = this.overlay.get(position);
    if (!entry) return this.generated(position);
    return entry.record ?? ({ ...this.generated(position), ...entry.patch } as T);
  }

  private readonly generatedCache = new Map<number, T>();

  /** A base record as generated (never the overlay version). Records are treated as immutable. */
  generated(position: number): T {
    const limit = this.config.cacheGenerated ?? 0;
    if (limit === 0) return this.config.generate(position);
    let record = this.generatedCache.get(position);
    if (!record) {
      record = this.config.generate(position);
      if (this.generatedCache.size >= limit) {
        const oldest = this.generatedCache.keys().next().value;
        if (oldest !== undefined) this.generatedCache.delete(oldest);
      }
      this.generatedCache.set(position, record);
    }
    return record;
  }

  isOverlaid(position: number): boolean {
    return this.overlay.has(position);
  }

  allocate(): number {
    return this.nextPosition++;
  }

  put(position: number, record: T): void {
    const old = this.overlay.get(position);
    const id = this.config.id(position);
    const keys: Record<string, number> = {};
    for (const [field, entries] of this.indexes) {
      if (old) {
        const at = this.findEntry(entries, old.keys[field] as number, id);
        if (at >= 0) entries.splice(at, 1);
      }
      const entry: KeyEntry = { k: this.config.recordKey(record, field), id, p: position };
      keys[field] = entry.k;
      const at = lowerBound(0, entries.length, (i) => compareEntry(entries[i] as KeyEntry, entry) >= 0);
      entries.splice(at, 0, entry);
    }
    if (!old && position < this.baseCount) insertSortedNum(this.overlaidBase, position);
    const compact = this.config.compact;
    if (compact) {
      this.overlay.set(position, { patch: this.diff(position, record), summary: compact.summarize(record), keys });
    } else {
      this.overlay.set(position, { record, summary: record as unknown as S, keys });
    }
    this.version++;
  }

  /** Fields of record that differ from the generated record at this position. */
  private diff(position: number, record: T): Partial<T> {
    const base = this.config.generate(position);
    const patch: Partial<T> = {};
    for (const key of Object.keys(record) as Array<keyof T>) {
      const value = record[key];
      const original = base[key];
      if (value === original) continue;
      if (typeof value === 'object' && value !== null && JSON.stringify(value) === JSON.stringify(original)) continue;
      patch[key] = value;
    }
    return patch;
  }

  private findEntry(entries: KeyEntry[], k: number, id: string): number {
    const probe = { k, id, p: 0 };
    const at = lowerBound(0, entries.length, (i) => compareEntry(entries[i] as KeyEntry, probe) >= 0);
    const found = entries[at];
    return found && found.k === k && found.id === id ? at : -1;
  }

  /** Base position range [lo, hi) satisfying every range on a base key. */
  private baseRange(ranges: RangeBound[]): [number, number] {
    let lo = 0;
    let hi = this.baseCount;
    for (const range of ranges) {
      const key = this.config.baseKeys[range.field];
      if (!key) continue;
      if (range.from !== undefined) {
        const from = range.from;
        lo = Math.max(lo, lowerBound(0, this.baseCount, (p) => key(p) >= from));
      }
      if (range.to !== undefined) {
        const to = range.to;
        hi = Math.min(hi, lowerBound(0, this.baseCount, (p) => key(p) > to));
      }
    }
    return [lo, Math.max(lo, hi)];
  }

  private filteredBase(lo: number, hi: number, predicate: (p: number) => boolean, key: string): Int32Array {
    const cacheKey = `${key}|${lo}|${hi}`;
    const cached = this.filterCache.get(cacheKey);
    if (cached) {
      // Refresh LRU position.
      this.filterCache.delete(cacheKey);
      this.filterCache.set(cacheKey, cached);
      return cached;
    }
    let buffer = new Int32Array(Math.min(hi - lo, 1024));
    let n = 0;
    for (let p = lo; p < hi; p++) {
      if (!predicate(p)) continue;
      if (n === buffer.length) {
        const grown = new Int32Array(Math.min(hi - lo, buffer.length * 2));
        grown.set(buffer);
        buffer = grown;
      }
      buffer[n++] = p;
    }
    const result = buffer.slice(0, n);
    this.filterCache.set(cacheKey, result);
    if (this.filterCache.size > FILTER_CACHE_SIZE) {
      const oldest = this.filterCache.keys().next().value;
      if (oldest !== undefined) this.filterCache.delete(oldest);
    }
    return result;
  }

  query(q: CollectionQuery<S>): QueryResult<T> {
    const baseKey = this.config.baseKeys[q.sortField];
    const entriesAll = this.indexes.get(q.sortField);
    if (!baseKey || !entriesAll) throw new Error(`${this.name}: cannot sort by ${q.sortField}`);

    // Base side.
    let seq: BaseSeq;
    if (q.baseNone) {
      seq = rangeSeq(0, 0);
    } else if (q.baseCandidates) {
      const [lo, hi] = this.baseRange(q.ranges);
      const chosen = [...new Set(q.baseCandidates)]
        .filter((p) => p >= lo && p < hi && (!q.basePredicate || q.basePredicate(p)))
        .sort((a, b) => a - b);
      seq = arraySeq(chosen);
    } else {
      const [lo, hi] = this.baseRange(q.ranges);
      seq = q.basePredicate
        ? arraySeq(this.filteredBase(lo, hi, q.basePredicate, q.baseFilterKey ?? String(Math.random())))
        : rangeSeq(lo, hi);
    }
    if (seq.size > 0 && this.overlaidBase.length > 0) {
      // Overlaid base positions are served from the overlay, never from the generator.
      const first = seq.at(0);
      const last = seq.at(seq.size - 1);
      const a = lowerBoundNum(this.overlaidBase, first);
      const b = lowerBoundNum(this.overlaidBase, last + 1);
      const removed: number[] = [];
      for (let i = a; i < b; i++) {
        const p = this.overlaidBase[i] as number;
        if (seq.has(p)) removed.push(p);
      }
      seq = excludingSeq(seq, removed);
    }

    // Overlay side, sorted ascending by (key, id).
    let from = 0;
    let to = entriesAll.length;
    for (const range of q.ranges) {
      if (range.field !== q.sortField) continue;
      if (range.from !== undefined) {
        const f = range.from;
        from = Math.max(from, lowerBound(0, entriesAll.length, (i) => (entriesAll[i] as KeyEntry).k >= f));
      }
      if (range.to !== undefined) {
        const t = range.to;
        to = Math.min(to, lowerBound(0, entriesAll.length, (i) => (entriesAll[i] as KeyEntry).k > t));
      }
    }
    const overlayEntries: KeyEntry[] = [];
    for (let i = from; i < to; i++) {
      const entry = entriesAll[i] as KeyEntry;
      const stored = this.overlay.get(entry.p) as StoredEntry<T, S>;
      if (!matchesRanges(stored.keys, q.ranges)) continue;
      if (q.overlayPredicate && !q.overlayPredicate(stored.summary)) continue;
      overlayEntries.push(entry);
    }

    const nA = seq.size;
    const nB = overlayEntries.length;
    const total = nA + nB;
    const skip = Math.max(0, q.skip);
    const limit = Math.max(0, q.limit);
    let startAsc: number;
    let endAsc: number;
    if (q.desc) {
      endAsc = Math.max(0, total - skip);
      startAsc = Math.max(0, endAsc - limit);
    } else {
      startAsc = Math.min(total, skip);
      endAsc = Math.min(total, skip + limit);
    }
    const idOf = this.config.id;
    const aEntry = (i: number): KeyEntry => {
      const p = seq.at(i);
      return { k: baseKey(p), id: idOf(p), p };
    };
    // k-th element split: how many of the first startAsc come from A.
    const k = startAsc;
    let lo = Math.max(0, k - nB);
    let hi = Math.min(k, nA);
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (compareEntry(aEntry(mid), overlayEntries[k - mid - 1] as KeyEntry) < 0) lo = mid + 1;
      else hi = mid;
    }
    let ia = lo;
    let ib = k - lo;
    const positions: number[] = [];
    for (let n = startAsc; n < endAsc; n++) {
      const a = ia < nA ? aEntry(ia) : undefined;
      const b = ib < nB ? overlayEntries[ib] : undefined;
      if (a && (!b || compareEntry(a, b) < 0)) {
        positions.push(a.p);
        ia++;
      } else if (b) {
        positions.push(b.p);
        ib++;
      }
    }
    if (q.desc) positions.reverse();
    return { items: positions.map((p) => this.get(p) as T), total };
  }

  /** Every record in position order (base generated on the fly). */
  *all(): Generator<T> {
    for (let p = 0; p < this.nextPosition; p++) {
      const record = this.get(p);
      if (record) yield record;
    }
  }

}

function matchesRanges(keys: Record<string, number>, ranges: RangeBound[]): boolean {
  for (const range of ranges) {
    const value = keys[range.field];
    // A range on a field that is not a sort key cannot be checked here; callers only use key fields.
    if (value === undefined) continue;
    if (range.from !== undefined && !(value >= range.from)) return false;
    if (range.to !== undefined && !(value <= range.to)) return false;
  }
  return true;
}

function compareEntry(a: KeyEntry, b: KeyEntry): number {
  return a.k - b.k || compareStrings(a.id, b.id);
}
