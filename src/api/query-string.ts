/**
 * Encodes query parameters the way the API's list endpoints take them: arrays as repeated keys
 * (`status=A&status=B`), objects such as `sortBy` as JSON (`sortBy={"updatedAt":1}`), dates as
 * ISO 8601, booleans as `true`/`false`; undefined and null are left out.
 */
export type QueryValue = string | number | boolean | Date | null | undefined | readonly (string | number)[] | Record<string, unknown>;
export type QueryParams = Record<string, QueryValue>;

export function encodeQuery(params: QueryParams | undefined): string {
  if (!params) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) search.append(key, String(item));
    } else if (value instanceof Date) {
      search.append(key, value.toISOString());
    } else if (typeof value === 'object') {
      search.append(key, JSON.stringify(value));
    } else {
      search.append(key, String(value));
    }
  }
  return search.toString();
}
