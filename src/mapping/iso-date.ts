/**
 * A fast path for the dates the API actually sends (`2024-05-01T13:45:10.123Z`, with an offset, or
 * date-only), used by the `date` transform before luxon: parsing them with luxon's `fromISO` was
 * ~15% of a backfill's CPU. The rules copy luxon's exactly (same fields, fraction truncated to
 * milliseconds with the same arithmetic, no offset means UTC); anything this does not recognise —
 * basic format, week or ordinal dates, `24:00`, bracketed zones, years before 1000 — returns
 * undefined and goes to luxon, so results are identical (see test/unit/mapping-iso-date.test.ts).
 */
const EXTENDED_ISO = /^(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,30}))?)?(?:(Z)|([+-])(\d\d)(?::?(\d\d))?)?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysIn = (year: number, month: number) => (month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!);

/** Lowest and highest instants whose UTC ISO text is the plain `YYYY-…` form luxon and Date agree on. */
const FIRST = Date.UTC(1000, 0, 1);
const LAST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Epoch milliseconds of an extended ISO 8601 text, or undefined when luxon must decide. */
export function parseIsoFast(text: string): number | undefined {
  return parseCanonical(text) ?? parseExtended(text);
}

/** luxon's milliseconds of each three-digit fraction, by its own arithmetic (see parseExtended). */
const MILLIS_OF_FRACTION = Array.from({ length: 1000 }, (_, n) => Math.floor(parseFloat(`0.${String(n).padStart(3, '0')}`) * 1000));

/**
 * `YYYY-MM-DDTHH:mm:ss.sssZ`, the form the API sends, read by character codes: the regular
 * expression and its match array were most of the date transform's cost. Undefined for any other
 * text — and for an invalid one, which `parseExtended` then refuses the same way.
 */
function parseCanonical(text: string): number | undefined {
  if (text.length !== 24 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84) return undefined;
  if (text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || text.charCodeAt(19) !== 46 || text.charCodeAt(23) !== 90) return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  const fraction = digits(text, 20, 3);
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || fraction < 0) return undefined;
  const millis = Date.UTC(year, month - 1, day, hour, minute, second, MILLIS_OF_FRACTION[fraction]);
  return millis >= FIRST && millis <= LAST ? millis : undefined;
}

/** The decimal number of `count` digits at `start`; -1 when one is not a digit. */
function digits(text: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

function parseExtended(text: string): number | undefined {
  const m = EXTENDED_ISO.exec(text);
  if (!m) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = m[4] === undefined ? 0 : Number(m[4]);
  const minute = m[5] === undefined ? 0 : Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  // luxon's parseMillis, to the bit: Math.floor(parseFloat("0." + fraction) * 1000).
  const millisecond = m[7] === undefined ? 0 : Math.floor(parseFloat(`0.${m[7]}`) * 1000);
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[9] !== undefined) {
    const offHour = Number(m[10]);
    const offMinute = m[11] === undefined ? 0 : Number(m[11]);
    if (offHour > 23 || offMinute > 59) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offHour * 60 + offMinute);
  }
  const millis = Date.UTC(year, month - 1, day, hour, minute, second, millisecond) - offsetMinutes * 60_000;
  return millis >= FIRST && millis <= LAST ? millis : undefined;
}

/**
 * The `date` transform's output in UTC for the formats that need no luxon; undefined for the others.
 * `text` is what `parseIsoFast` accepted: when it already is the canonical `YYYY-MM-DDTHH:mm:ss.sssZ`
 * (what the API sends), it is the ISO output as it stands.
 */
export function formatUtcFast(millis: number, format: string, text: string): string | number | undefined {
  if (millis < FIRST || millis > LAST) return undefined;
  switch (format) {
    case 'iso':
      return text.length === 24 && text[19] === '.' && text[23] === 'Z' ? text : new Date(millis).toISOString();
    case 'isoDate':
      return new Date(millis).toISOString().slice(0, 10);
    case 'epochMillis':
      return millis;
    default:
      return undefined;
  }
}
