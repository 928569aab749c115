import Big from 'big.js';

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
/** OWASP's spreadsheet-formula characters: a CSV drop may prefix such a cell with `'`. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * Whether a sink's text equals the mapped API value, judged by what it means, not how a driver
 * or file spells it: empty and null alike (a CSV cannot tell them apart), decimals by exact value
 * (`12.50` = `12.5`, never through a float), date-times by instant (a zone-less date-time is UTC,
 * as the SQL sink writes it), JSON by content, and a formula cell neutralised with a leading `'`
 * as the text it protects.
 */
export function sameCell(sink: string | null, api: string | null): boolean {
  const a = sink ?? '';
  const b = api ?? '';
  if (a === b) return true;
  if (a === '' || b === '') return false;
  if (DECIMAL.test(a) && DECIMAL.test(b)) return new Big(a).eq(new Big(b));
  if (DATE_TIME.test(a) && DATE_TIME.test(b)) {
    const x = instant(a);
    const y = instant(b);
    return x !== null && x === y;
  }
  if (a.startsWith("'") && a.slice(1) === b && FORMULA_START.test(b)) return true;
  if (/^[[{]/.test(a) && /^[[{]/.test(b)) return sameJson(a, b);
  return false;
}

/** Epoch millis of an ISO date or date-time; without a zone it is UTC. */
export function instant(text: string | null): number | null {
  if (!text || !DATE_TIME.test(text)) return null;
  const normalised = text.replace(' ', 'T');
  const zoned = normalised.length > 10 && !/(Z|[+-]\d{2}:?\d{2})$/.test(normalised) ? `${normalised}Z` : normalised;
  const millis = Date.parse(zoned);
  return Number.isNaN(millis) ? null : millis;
}

function sameJson(a: string, b: string): boolean {
  try {
    return canonical(JSON.parse(a)) === canonical(JSON.parse(b));
  } catch {
    return false;
  }
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
