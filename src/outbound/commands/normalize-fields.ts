/**
 * Input rows are flat CSV records (every cell text) or objects from JSON / SQL payloads. Before
 * validation: keys are trimmed, columns starting with `_` are the ERP's own notes and are not
 * sent, empty cells and nulls mean "absent" (CSV cannot tell them apart) — except
 * `preSetOrderStatus`, whose empty string is a real value (§2.6) that a present-but-empty cell
 * expresses. Text values are trimmed.
 */
export const EMPTY_IS_VALUE = new Set(['preSetOrderStatus']);

/**
 * `keepEmpty`: only creates keep an empty `preSetOrderStatus` (it is required there); for other
 * kinds an empty cell in a shared CSV header means "not given", like every other empty cell.
 */
export function normalizeFields(fields: Record<string, unknown>, keepEmpty = true): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [rawKey, rawValue] of Object.entries(fields)) {
    const key = rawKey.trim();
    if (key === '' || key.startsWith('_')) continue;
    const value = typeof rawValue === 'string' ? rawValue.trim() : rawValue;
    if (value === null || value === undefined) continue;
    if (value === '' && !(keepEmpty && EMPTY_IS_VALUE.has(key))) continue;
    out[key] = value;
  }
  return out;
}
