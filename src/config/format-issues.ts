import type { z } from 'zod';
import { closestKey } from './closest-key.js';
import { describeValue as describeAnyValue } from '../util/describe-value.js';

/**
 * Turns zod issues into one plain-words line per problem, each starting with the dotted path of
 * the offending value (`sync.streams.loads.lookback: expected an ISO 8601 duration, got "1 day"`).
 * Connectors and mappings validate their own blocks with this too, passing their location as
 * `pathPrefix`, so every configuration error reads the same whatever module found it.
 */
export interface FormatIssuesOptions {
  /** The schema that produced the error: lets unknown-key lines suggest the closest known key. */
  schema?: z.ZodType;
  /**
   * The value that was parsed: used to quote what was found when the parse did not run with
   * `reportInput: true`.
   */
  input?: unknown;
}

type Issue = z.core.$ZodIssue;
type PathSegment = PropertyKey;

export function formatZodIssues(
  error: z.ZodError,
  pathPrefix: readonly string[] = [],
  options: FormatIssuesOptions = {},
): string[] {
  const lines: string[] = [];
  for (const issue of error.issues) lines.push(...formatIssue(issue, pathPrefix, options));
  return lines;
}

/** `api.rateLimit.requestsPerSecond`, `sync.streams.loads.sinks[0]`. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out === '' ? '(root)' : out;
}

/** What was found, in the config file's (YAML) words: `string "ten"`, `number 5`, `a list`. */
export function describeValue(value: unknown): string {
  return describeAnyValue(value, 'yaml');
}

function formatIssue(issue: Issue, prefix: readonly string[], options: FormatIssuesOptions): string[] {
  const path = [...prefix, ...issue.path];
  const at = formatPath(path);
  const input = 'input' in issue && issue.input !== undefined ? issue.input : valueAt(options.input, issue.path);

  switch (issue.code) {
    case 'invalid_type': {
      // A missing key reaches the schema as undefined: say so instead of "got nothing".
      if (input === undefined) return [`${at}: is required`];
      return [`${at}: expected ${expectedPhrase(issue.expected)}, got ${describeValue(input)}`];
    }
    case 'unrecognized_keys': {
      const known = knownKeysAt(options.schema, issue.path);
      return issue.keys.map((key) => `${formatPath([...path, key])}: ${unknownKeyMessage(key, known)}`);
    }
    case 'invalid_value':
      if (input === undefined) return [`${at}: is required (one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')})`];
      return [
        `${at}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(input)}`,
      ];
    case 'too_small':
      return [`${at}: ${boundMessage('at least', issue.minimum, issue.inclusive, issue.origin, input)}`];
    case 'too_big':
      return [`${at}: ${boundMessage('at most', issue.maximum, issue.inclusive, issue.origin, input)}`];
    case 'invalid_format':
      return [`${at}: expected ${formatPhrase(issue.format, issue.pattern)}, got ${describeValue(input)}`];
    case 'not_multiple_of':
      return [`${at}: expected a multiple of ${String(issue.divisor)}, got ${describeValue(input)}`];
    case 'invalid_union': {
      // Alternatives that all want another type: "expected a string, a number or true or false".
      const expected = issue.errors.map((alt) => (alt.length === 1 && alt[0]?.code === 'invalid_type' && alt[0].path.length === 0 ? alt[0].expected : undefined));
      if (expected.length > 0 && expected.every((e) => e !== undefined)) {
        if (input === undefined) return [`${at}: is required`];
        const phrases = expected.map((e) => (e === 'boolean' ? 'a boolean' : expectedPhrase(e as string)));
        const list = phrases.length > 1 ? `${phrases.slice(0, -1).join(', ')} or ${phrases.at(-1)}` : phrases[0];
        return [`${at}: expected ${list}, got ${describeValue(input)}`];
      }
      // Otherwise report the alternative that got furthest instead of "invalid input".
      const best = issue.errors.slice().sort((a, b) => deepest(b) - deepest(a))[0];
      if (best && best.length > 0) return best.flatMap((inner) => formatIssue(inner, path.map(String), options));
      return [`${at}: ${issue.message}`];
    }
    case 'invalid_key':
      return [`${at}: invalid key (${issue.issues.map((i) => i.message).join('; ')})`];
    case 'invalid_element':
      return issue.issues.flatMap((inner) => formatIssue(inner, path.map(String), options));
    case 'custom':
    default:
      // Custom issues are written by our own schema helpers in plain words already.
      return [`${at}: ${issue.message}`];
  }
}

function deepest(issues: readonly Issue[]): number {
  return Math.max(0, ...issues.map((i) => i.path.length));
}

function expectedPhrase(expected: string): string {
  switch (expected) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'int':
      return 'a whole number';
    case 'boolean':
      return 'true or false';
    case 'object':
    case 'record':
    case 'map':
      return 'a mapping';
    case 'array':
      return 'a list';
    default:
      return expected;
  }
}

function formatPhrase(format: string, pattern: RegExp | string | undefined): string {
  switch (format) {
    case 'url':
      return 'a URL';
    case 'datetime':
      return 'an ISO 8601 date-time';
    case 'regex':
      return `a value matching ${String(pattern)}`;
    case 'starts_with':
      return 'a value with the required prefix';
    default:
      return `a valid ${format}`;
  }
}

function boundMessage(
  word: 'at least' | 'at most',
  bound: number | bigint | Date,
  inclusive: boolean | undefined,
  origin: string,
  input: unknown,
): string {
  const n = Number(bound);
  const got = describeValue(input);
  const strict = inclusive === false;
  switch (origin) {
    case 'string':
      return `expected ${word} ${n} character${n === 1 ? '' : 's'}, got ${got}`;
    case 'array':
    case 'set':
      return `expected ${word} ${n} item${n === 1 ? '' : 's'}, got ${Array.isArray(input) ? input.length : got}`;
    default: {
      const comparison = strict ? (word === 'at least' ? 'greater than' : 'less than') : word;
      return `expected a number ${comparison} ${n}, got ${got}`;
    }
  }
}

function unknownKeyMessage(key: string, known: readonly string[] | undefined): string {
  if (!known || known.length === 0) return 'unknown key';
  const suggestion = closestKey(key, known);
  if (suggestion) return `unknown key (did you mean ${JSON.stringify(suggestion)}?)`;
  return `unknown key (expected one of: ${known.join(', ')})`;
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let current = root;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

/**
 * Finds the object schema at `path` by walking zod's definitions through wrappers (optional,
 * default, pipe, …), records, arrays and unions, to list the keys an object accepts.
 */
function knownKeysAt(schema: z.ZodType | undefined, path: readonly PathSegment[]): string[] | undefined {
  if (!schema) return undefined;
  const keys = new Set<string>();
  for (const target of schemasAt(schema as unknown as ZodNode, path, 0)) {
    const shape = objectShape(target);
    if (shape) for (const key of Object.keys(shape)) keys.add(key);
  }
  return keys.size > 0 ? [...keys] : undefined;
}

interface ZodNode {
  _zod: { def: Record<string, unknown> & { type: string } };
}

function unwrap(node: ZodNode): ZodNode[] {
  const def = node._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return unwrap(def['innerType'] as ZodNode);
    case 'pipe':
      return [...unwrap(def['in'] as ZodNode), ...unwrap(def['out'] as ZodNode)];
    case 'union':
      return (def['options'] as ZodNode[]).flatMap(unwrap);
    case 'intersection':
      return [...unwrap(def['left'] as ZodNode), ...unwrap(def['right'] as ZodNode)];
    case 'lazy':
      return unwrap((def['getter'] as () => ZodNode)());
    default:
      return [node];
  }
}

function schemasAt(node: ZodNode, path: readonly PathSegment[], index: number): ZodNode[] {
  const candidates = unwrap(node);
  if (index === path.length) return candidates;
  const segment = path[index];
  const next: ZodNode[] = [];
  for (const candidate of candidates) {
    const def = candidate._zod.def;
    if (def.type === 'object') {
      const child = (def['shape'] as Record<string, ZodNode>)[String(segment)];
      if (child) next.push(child);
    } else if (def.type === 'record') {
      next.push(def['valueType'] as ZodNode);
    } else if (def.type === 'array') {
      next.push(def['element'] as ZodNode);
    }
  }
  return next.flatMap((child) => schemasAt(child, path, index + 1));
}

function objectShape(node: ZodNode): Record<string, unknown> | undefined {
  const def = node._zod.def;
  return def.type === 'object' ? (def['shape'] as Record<string, unknown>) : undefined;
}
