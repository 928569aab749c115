import { badRequest } from './http-error.js';

const DAY_MS = 86_400_000;

/**
 * Query decoding that accepts what real clients send: repeated keys (`status=A&status=B`), `key[]=`,
 * bracket objects (`sortBy[updatedAt]=1`), JSON objects and arrays (`sortBy={"updatedAt":1}`),
 * a single value where an array is expected, and `true`/`false` booleans. Every bad value is a 400
 * naming the parameter. Commas are NOT split: `status=A,B` is the single status "A,B".
 */
export class QueryParams {
  private readonly values = new Map<string, string[]>();
  private readonly objects = new Map<string, Record<string, string>>();

  constructor(search: string) {
    const params = new URLSearchParams(search);
    for (const [rawKey, value] of params) {
      const bracket = /^([^[\]]+)\[([^[\]]*)\]$/.exec(rawKey);
      if (bracket) {
        const [, name, inner] = bracket as unknown as [string, string, string];
        if (inner === '' || /^\d+$/.test(inner)) this.push(name, value);
        else (this.objects.get(name) ?? this.objects.set(name, {}).get(name)!)[inner] = value;
        continue;
      }
      this.push(rawKey, value);
    }
  }

  private push(key: string, value: string): void {
    const list = this.values.get(key);
    if (list) list.push(value);
    else this.values.set(key, [value]);
  }

  has(name: string): boolean {
    return this.values.has(name) || this.objects.has(name);
  }

  keys(): string[] {
    return [...new Set([...this.values.keys(), ...this.objects.keys()])];
  }

  string(name: string): string | undefined {
    const list = this.values.get(name);
    if (!list || list.length === 0) return undefined;
    if (list.length > 1) throw badRequest(`${name} must be a single value`);
    return list[0];
  }

  /** Array parameter; undefined when absent. Empty strings are dropped. */
  array(name: string): string[] | undefined {
    const list = this.values.get(name);
    if (!list) return undefined;
    const out: string[] = [];
    for (const value of list) {
      if (value.startsWith('[')) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(value);
        } catch {
          throw badRequest(`${name} is not a valid JSON array`);
        }
        if (!Array.isArray(parsed)) throw badRequest(`${name} must be an array`);
        for (const item of parsed) out.push(String(item));
      } else if (value !== '') out.push(value);
    }
    return out;
  }

  boolean(name: string): boolean | undefined {
    const value = this.string(name);
    if (value === undefined || value === '') return undefined;
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw badRequest(`${name} must be true or false`);
  }

  integer(name: string, opts: { min?: number; max?: number } = {}): number | undefined {
    const value = this.string(name);
    if (value === undefined || value === '') return undefined;
    if (!/^-?\d+$/.test(value)) throw badRequest(`${name} must be an integer`);
    const n = Number(value);
    if (opts.min !== undefined && n < opts.min) throw badRequest(`${name} must be at least ${opts.min}`);
    if (opts.max !== undefined && n > opts.max) throw badRequest(`${name} must be at most ${opts.max}`);
    return n;
  }

  /** JSON or bracket object (sortBy). */
  object(name: string): Record<string, string> | undefined {
    const bracket = this.objects.get(name);
    if (bracket) return bracket;
    const value = this.string(name);
    if (value === undefined || value === '') return undefined;
    if (!value.startsWith('{')) throw badRequest(`${name} must be an object such as {"updatedAt":1}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw badRequest(`${name} is not valid JSON`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw badRequest(`${name} must be an object`);
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
  }

  /**
   * Date or datetime, as ms. A date-only value means the start of that UTC day, or with `endOfDay`
   * its last millisecond (so inclusive date bounds include the whole day).
   */
  date(name: string, endOfDay = false): number | undefined {
    const value = this.string(name);
    if (value === undefined || value === '') return undefined;
    return parseDateParam(name, value, endOfDay);
  }

  /**
   * A day-granular date (brokerage): the UTC day of the value, a time part being dropped, as the
   * day's first millisecond, or with `endOfDay` its last (so an inclusive bound covers the day).
   */
  day(name: string, endOfDay = false): number | undefined {
    const ms = this.date(name);
    if (ms === undefined) return undefined;
    const start = Math.floor(ms / DAY_MS) * DAY_MS;
    return endOfDay ? start + DAY_MS - 1 : start;
  }
}

export function parseDateParam(name: string, value: string, endOfDay: boolean): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const ms = Date.parse(`${value}T00:00:00.000Z`);
    if (Number.isNaN(ms)) throw badRequest(`${name} is not a valid date`);
    return endOfDay ? ms + DAY_MS - 1 : ms;
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value)) throw badRequest(`${name} is not a valid ISO 8601 date`);
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw badRequest(`${name} is not a valid ISO 8601 date`);
  return ms;
}

/** Parses `{field: 1|-1}`; returns the first key with its direction. */
export function parseSortObject(name: string, sort: Record<string, string> | undefined, allowed: string[]): { field: string; desc: boolean } | undefined {
  if (!sort) return undefined;
  const entries = Object.entries(sort);
  if (entries.length === 0) return undefined;
  const [field, direction] = entries[0] as [string, string];
  if (!allowed.includes(field)) throw badRequest(`${name} supports only ${allowed.join(', ')}`);
  if (direction !== '1' && direction !== '-1') throw badRequest(`${name}.${field} must be 1 or -1`);
  return { field, desc: direction === '-1' };
}
