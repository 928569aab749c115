/**
 * Field paths used by mappings: `a.b.c`, array indexes `driverOrder[0].city` (negative counts from
 * the end: `statusHistory[-1].status`), quoted keys for odd names `referenceFields["Voayge"]` or
 * `"odd.key".x`. Special roots: `$parent.<path>` (the enclosing element of a child table, chainable
 * as `$parent.$parent.x`), `$root.<path>` (the record's top-level data), `$index` (position of the
 * current child element) and `$key` (the sync record's key). Paths are parsed once when the mapping
 * is loaded, so a typo is a config error rather than a silent null at run time.
 */
import type { CompiledPath, PathScope, PathSegment } from '../contracts/mapping.js';

export type { CompiledPath, PathScope, PathSegment } from '../contracts/mapping.js';

export class PathSyntaxError extends Error {
  constructor(path: string, reason: string) {
    super(`invalid path "${path}": ${reason}`);
    this.name = 'PathSyntaxError';
  }
}

const BARE_KEY = /^[^.[\]"'\s]+/;

export function parsePath(text: string): CompiledPath {
  if (typeof text !== 'string' || text.trim() === '') throw new PathSyntaxError(String(text), 'path is empty');
  const source = text.trim();
  if (source === '$index') return { text: source, scope: 'index', depth: 0, segments: [] };
  if (source === '$key') return { text: source, scope: 'key', depth: 0, segments: [] };

  let rest = source;
  let scope: PathScope = 'element';
  let depth = 0;
  while (rest === '$parent' || rest.startsWith('$parent.') || rest.startsWith('$parent[')) {
    scope = 'parent';
    depth += 1;
    rest = rest.slice('$parent'.length);
    if (rest.startsWith('.')) rest = rest.slice(1);
  }
  if (scope === 'element' && (rest === '$root' || rest.startsWith('$root.') || rest.startsWith('$root['))) {
    scope = 'root';
    rest = rest.slice('$root'.length);
    if (rest.startsWith('.')) rest = rest.slice(1);
  }
  if (/^\$(index|key|root|parent)\b/.test(rest)) {
    throw new PathSyntaxError(source, `"${rest.split(/[.[]/)[0]}" may only start a path`);
  }
  return { text: source, scope, depth, segments: parseSegments(rest, source) };
}

function parseSegments(input: string, source: string): PathSegment[] {
  const segments: PathSegment[] = [];
  let i = 0;
  let expectSegment = true;
  while (i < input.length) {
    const ch = input[i];
    if (ch === '[') {
      const close = input.indexOf(']', i);
      const inner = input[i + 1];
      if (inner === '"' || inner === "'") {
        const { value, end } = readQuoted(input, i + 1, source);
        if (input[end] !== ']') throw new PathSyntaxError(source, `expected "]" at position ${end + 1}`);
        segments.push({ kind: 'key', name: value });
        i = end + 1;
      } else {
        if (close < 0) throw new PathSyntaxError(source, 'unclosed "["');
        const body = input.slice(i + 1, close).trim();
        if (!/^-?\d+$/.test(body)) throw new PathSyntaxError(source, `array index must be an integer, got "${body}"`);
        segments.push({ kind: 'index', index: Number(body) });
        i = close + 1;
      }
      expectSegment = false;
      continue;
    }
    if (ch === '.') {
      if (expectSegment) throw new PathSyntaxError(source, `empty segment at position ${i + 1}`);
      expectSegment = true;
      i += 1;
      if (i >= input.length) throw new PathSyntaxError(source, 'path ends with "."');
      continue;
    }
    if (!expectSegment) throw new PathSyntaxError(source, `expected "." or "[" at position ${i + 1}`);
    if (ch === '"' || ch === "'") {
      const { value, end } = readQuoted(input, i, source);
      segments.push({ kind: 'key', name: value });
      i = end;
    } else {
      const match = BARE_KEY.exec(input.slice(i));
      if (!match) throw new PathSyntaxError(source, `unexpected character "${ch}" at position ${i + 1}`);
      // A key literally named `$index` must be quoted; bare, it is almost surely a misplaced special root.
      if (/^\$(index|key|root|parent)$/.test(match[0])) throw new PathSyntaxError(source, `"${match[0]}" may only start a path`);
      segments.push({ kind: 'key', name: match[0] });
      i += match[0].length;
    }
    expectSegment = false;
  }
  return segments;
}

/** Reads a quoted key starting at `start` (the quote); backslash escapes the next character. */
function readQuoted(input: string, start: number, source: string): { value: string; end: number } {
  const quote = input[start];
  let value = '';
  let i = start + 1;
  while (i < input.length) {
    const ch = input[i]!;
    if (ch === '\\' && i + 1 < input.length) {
      value += input[i + 1];
      i += 2;
      continue;
    }
    if (ch === quote) return { value, end: i + 1 };
    value += ch;
    i += 1;
  }
  throw new PathSyntaxError(source, 'unclosed quote');
}

/** Reads `segments` from `value`; missing keys, wrong shapes and out-of-range indexes give undefined. */
export function getAtSegments(value: unknown, segments: readonly PathSegment[]): unknown {
  let current: unknown = value;
  for (const segment of segments) {
    if (current === null || current === undefined) return undefined;
    if (segment.kind === 'index') {
      if (!Array.isArray(current)) return undefined;
      const index = segment.index < 0 ? current.length + segment.index : segment.index;
      current = current[index];
    } else {
      if (typeof current !== 'object') return undefined;
      // Own properties only: a record field named `constructor` or `__proto__` must not reach the prototype.
      if (!Object.hasOwn(current, segment.name)) return undefined;
      current = (current as Record<string, unknown>)[segment.name];
    }
  }
  return current;
}

/** Convenience for one-off reads (tests, tools): parses then reads; special roots are not supported. */
export function getPath(value: unknown, path: string): unknown {
  const compiled = parsePath(path);
  if (compiled.scope !== 'element') throw new PathSyntaxError(path, 'special roots need a mapping context');
  return getAtSegments(value, compiled.segments);
}

/** Deletes the value at `segments` (own keys only) from a structure the caller owns. */
export function deleteAtSegments(value: unknown, segments: readonly PathSegment[]): void {
  if (segments.length === 0) return;
  const parent = getAtSegments(value, segments.slice(0, -1));
  const last = segments[segments.length - 1]!;
  if (last.kind === 'key' && parent !== null && typeof parent === 'object' && !Array.isArray(parent)) {
    delete (parent as Record<string, unknown>)[last.name];
  } else if (last.kind === 'index' && Array.isArray(parent)) {
    const index = last.index < 0 ? parent.length + last.index : last.index;
    if (index >= 0 && index < parent.length) parent[index] = null;
  }
}
