/**
 * The CLI's numeric memory and tier-up settings, each read where it applies (young-generation.ts,
 * heap-growth.ts, tier-up-budget.ts): a value that is not a whole number ≥ 0 falls back to V8's
 * own behaviour there. A typo must not pass unseen, so bin.ts reports each one on stderr, once.
 */
const WHOLE_NUMBER_SETTINGS: readonly (readonly [name: string, fallback: string])[] = [
  ['FREIGHT_SYNC_SEMI_SPACE_MIB', 'the young generation is not capped'],
  ['FREIGHT_SYNC_HEAP_GROWING_PERCENT', "V8's own heap growth applies"],
  ['FREIGHT_SYNC_INTERRUPT_BUDGET_KIB', "V8's own interrupt budget applies"],
];

/** One message per setting in `env` that is set but not a whole number ≥ 0 (`0` switches it off). */
export function mistypedNumberSettings(env: NodeJS.ProcessEnv): string[] {
  return WHOLE_NUMBER_SETTINGS.flatMap(([name, fallback]) => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return [];
    const value = Number(raw);
    return Number.isInteger(value) && value >= 0 ? [] : [`${name}=${raw} is not a whole number ≥ 0: ${fallback}`];
  });
}
