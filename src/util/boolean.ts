/**
 * The one vocabulary of yes/no words the project accepts wherever a boolean arrives as text:
 * config values (`${VAR}` interpolation always yields strings), stream options, mapping
 * `boolean` transforms and fields of outbound requests from the ERP. One list, so a word that
 * works in one place works in all of them. Case and surrounding spaces are ignored.
 */
export const TRUE_WORDS = ['true', 'yes', 'y', 'on', '1'] as const;
export const FALSE_WORDS = ['false', 'no', 'n', 'off', '0'] as const;

/** For messages: `true/false, yes/no, y/n, on/off or 1/0`. */
export const BOOLEAN_WORDS = 'true/false, yes/no, y/n, on/off or 1/0';

const TRUE_SET: ReadonlySet<string> = new Set(TRUE_WORDS);
const FALSE_SET: ReadonlySet<string> = new Set(FALSE_WORDS);

/**
 * `true`/`false` for a boolean, the numbers 1/0, or one of the words above; `undefined` for
 * anything else (the caller reports it in its own terms, naming the field).
 */
export function parseBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value !== 'string') return undefined;
  const word = value.trim().toLowerCase();
  if (TRUE_SET.has(word)) return true;
  if (FALSE_SET.has(word)) return false;
  return undefined;
}
