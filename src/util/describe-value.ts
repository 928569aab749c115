/**
 * The one way an error message shows the value it found ("got …", "cannot parse date …"): config
 * validation, outbound command fields and mapping transforms all use it, so quoting, truncation and
 * the words for containers agree everywhere. Only scalars are shown; a container is named by kind,
 * because an error line quoting a whole document (or a secret nested in it) helps nobody.
 */

/** Characters of a string shown before it is cut with "…": enough to recognise the cell. */
const MAX_SHOWN = 60;

/**
 * Whose words to use. `json` (payload fields, mapped records): `"abc"`, `an array of 3`,
 * `an object`. `yaml` (the config file): strings carry their type, `string "5"`, because in YAML
 * an unquoted 5 and a quoted "5" look alike and the type is usually the mistake; containers are
 * YAML's `a list` and `a mapping`.
 */
export type ValueDialect = 'json' | 'yaml';

export function describeValue(value: unknown, dialect: ValueDialect = 'json'): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return dialect === 'yaml' ? 'a list' : `an array of ${value.length}`;
  switch (typeof value) {
    case 'string':
      return dialect === 'yaml' ? `string ${quoteText(value)}` : quoteText(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${typeof value} ${String(value)}`;
    case 'object':
      return dialect === 'yaml' ? 'a mapping' : 'an object';
    default:
      return typeof value;
  }
}

/** `"abc"`; a long text cut after MAX_SHOWN characters, with "…" inside the quotes. */
export function quoteText(text: string): string {
  return JSON.stringify(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text);
}
