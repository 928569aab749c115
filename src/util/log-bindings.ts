import pino, { type Logger, type LogFn } from 'pino';

/**
 * pino writes a child's bindings after its parent's, and a log call's object after both, without
 * looking for repeated keys: `logger.child({ component: 'api' }).child({ component: 'auth' })` or
 * a connector re-binding the `connector` it was given writes `"component"` twice on every line.
 * Most JSON readers keep the last value; some keep the first, some refuse the line. These two
 * hooks keep each key once, with the most specific value (the child's over its parent's, the log
 * call's over the bindings) — the value a last-wins reader saw before.
 */
const { chindingsSym } = pino.symbols;

type WithChindings = Logger & { [chindingsSym]: string };


/** `,"a":1,"b":"x"` (pino's serialized bindings) as an object; a repeated key keeps its last value. */
function parseBindings(chindings: string): Record<string, unknown> {
  return chindings.length > 1 ? (JSON.parse(`{${chindings.slice(1)}}`) as Record<string, unknown>) : {};
}

function serializeBindings(bindings: Record<string, unknown>): string {
  return Object.entries(bindings)
    .map(([key, value]) => `,${JSON.stringify(key)}:${JSON.stringify(value)}`)
    .join('');
}

/**
 * Installs the child override on a root logger: every descendant inherits it (pino children are
 * `Object.create(parent)`), so third-party connectors' children are covered too.
 */
export function dedupeChildBindings(root: Logger): void {
  const originalChild = root.child as unknown as (this: Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => Logger;
  const dedupedChild = function (this: Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions): Logger {
    const child = originalChild.call(this, bindings, options) as WithChindings;
    const chindings = child[chindingsSym] ?? '';
    const merged = parseBindings(chindings);
    // Only rewrite when something repeats: the common child keeps pino's own serialization.
    if (Object.keys(merged).length !== occurrences(chindings)) child[chindingsSym] = serializeBindings(merged);
    return child;
  };
  (root as { child: unknown }).child = dedupedChild;
}

/** How many `,"key":` entries pino appended (top level only: nested objects are inside values). */
function occurrences(chindings: string): number {
  let count = 0;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < chindings.length; i += 1) {
    const c = chindings[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') depth -= 1;
    else if (c === ',' && depth === 0) count += 1;
  }
  return count;
}

/**
 * pino `hooks.logMethod`: when a log call's object repeats a bound key, that line is written with
 * the binding left out (the call's value is the more specific one). Cheap when nothing repeats: a
 * substring test per key.
 */
export function dedupeCallBindings(this: Logger, args: Parameters<LogFn>, method: LogFn): void {
  const first = args[0] as unknown;
  const self = this as WithChindings;
  const chindings = self[chindingsSym] ?? '';
  if (first === null || typeof first !== 'object' || first instanceof Error || !chindings) {
    method.apply(this, args);
    return;
  }
  const repeated = Object.keys(first).filter((key) => chindings.includes(`${JSON.stringify(key)}:`));
  if (repeated.length === 0) {
    method.apply(this, args);
    return;
  }
  const bindings = parseBindings(chindings);
  const present = repeated.filter((key) => key in bindings);
  if (present.length === 0) {
    method.apply(this, args);
    return;
  }
  for (const key of present) delete bindings[key];
  // Synchronous: pino serializes and writes the line inside `method`, so nothing else sees this.
  self[chindingsSym] = serializeBindings(bindings);
  try {
    method.apply(this, args);
  } finally {
    self[chindingsSym] = chindings;
  }
}
