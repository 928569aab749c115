import type { z } from 'zod';
import { knownContentJson, knownRecordJson } from '../../util/record-json.js';
import { memberPieces, memberRuns, sourceJsonOf } from '../source-json.js';
import { identifier, optionalBoolean, optionalDate, optionalNumber, optionalString, requiredString } from './common.js';

/** A field type the fast path knows: its check, and what zod's output makes of a valid value. */
interface KnownField {
  readonly accepts: (value: unknown) => boolean;
  readonly output?: (value: unknown) => unknown;
}

const isText = (value: unknown): value is string => typeof value === 'string';
const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
/** undefined (absent, or present as undefined) and null pass the optional-nullable types. */
const nothing = (value: unknown): boolean => value === undefined || value === null;

/**
 * The field types of common.ts, by identity. A schema with a field of any other type (an array,
 * a nested object, an inline `z.string()`) gets no fast path: the table cannot drift from zod.
 */
const KNOWN = new Map<z.ZodType, KnownField>([
  [optionalString, { accepts: (v) => nothing(v) || isText(v) }],
  [optionalDate, { accepts: (v) => nothing(v) || (isText(v) && (v === '' || !Number.isNaN(Date.parse(v)))) }],
  [optionalBoolean, { accepts: (v) => nothing(v) || typeof v === 'boolean' }],
  [optionalNumber, { accepts: (v) => nothing(v) || isFiniteNumber(v) || isText(v) }],
  [requiredString, { accepts: (v) => isText(v) && v.length >= 1 }],
  [identifier, { accepts: (v) => (isText(v) && v.length >= 1) || isFiniteNumber(v), output: (v) => String(v) }],
]);

type FastParse = (input: unknown) => object | undefined;
const compiled = new WeakMap<z.ZodType, FastParse | null>();

/**
 * A faster parse of a `z.looseObject` whose fields are all common.ts types, for the elements of
 * list pages (zod's generic object parse of 50 loads was ~0.8 ms per page). It returns exactly
 * zod's output for a valid element — the declared keys present, in declaration order, then every
 * other key in input order (`__proto__` left out), transforms applied — which matters: the content
 * hash covers that object's JSON. One exception: an element of a large page whose text is its
 * JSON and whose values zod would keep is returned itself, in the API's order, with its content
 * hash still over zod's order (keptAsSent). Callers hand outputs on in the API's order
 * (src/api/api-order.ts). For anything it does not accept it returns undefined and zod parses the
 * element (and names the problem). test/unit/api-fast-object.test.ts compares both;
 * test/unit/api-source-json.test.ts the elements kept as sent.
 */
export function fastObjectParser(schema: z.ZodType): FastParse | undefined {
  let parse = compiled.get(schema);
  if (parse === undefined) {
    parse = compile(schema) ?? null;
    compiled.set(schema, parse);
  }
  return parse ?? undefined;
}

function compile(schema: z.ZodType): FastParse | undefined {
  const def = (schema as unknown as { _zod: { def: { type: string; shape?: Record<string, z.ZodType>; catchall?: { _zod: { def: { type: string } } }; checks?: unknown[] } } })._zod.def;
  if (def.type !== 'object' || !def.shape || def.catchall?._zod.def.type !== 'unknown' || (def.checks?.length ?? 0) > 0) return undefined;
  if (Object.getOwnPropertySymbols(def.shape).length > 0) return undefined;
  const keys = Object.keys(def.shape);
  const fields: KnownField[] = [];
  for (const key of keys) {
    const field = KNOWN.get(def.shape[key]!);
    if (!field || key === '__proto__') return undefined;
    fields.push(field);
  }
  const declared = new Set(keys);
  const outputOf = new Map(keys.map((key, i) => [key, fields[i]!.output]));
  const shapes: Shape[] = [];
  /** zod's output built key by key (an object of many keys ends in V8's dictionary mode). */
  const build = (record: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      // zod: an optional key that is absent stays absent; a present one is kept, even as undefined.
      if (!(key in record)) continue;
      const output = fields[i]!.output;
      out[key] = output ? output(record[key]) : record[key];
    }
    for (const key in record) {
      if (declared.has(key) || key === '__proto__') continue;
      out[key] = record[key];
    }
    return out;
  };
  return (input) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
    const record = input as Record<string, unknown>;
    for (let i = 0; i < keys.length; i++) if (!fields[i]!.accepts(record[keys[i]!])) return undefined;
    // Which keys are present, and in which order, depends on the keys `for…in` lists — and, for
    // declared keys, on the prototype (`in`), which is Object.prototype for everything JSON.parse made.
    if (Object.getPrototypeOf(record) !== Object.prototype) return build(record);
    const shape = shapeOf(shapes, record, () => {
      const inputKeys: string[] = [];
      for (const key in record) inputKeys.push(key);
      return outputShape(keys, declared, outputOf, record, inputKeys);
    });
    if (shape.runs && keptAsSent(shape, record, fields, keys)) return record;
    return shape.template ? fill(shape, shape.template, record) : build(record);
  };
}

/**
 * The output keys for one order of input keys, and once that order was seen twice, an object with
 * exactly those keys (all null) that outputs start as a copy of. Built key by key, an output of
 * ~100 keys (a load) ended in V8's dictionary mode, which every later reader paid for: its JSON
 * (content hash, `_raw`) and the mapping's reads were slower. A page's elements mostly share a
 * few key orders. The keys, their order and the values are those `build` gives.
 */
interface Shape {
  readonly inputKeys: readonly string[];
  readonly outputKeys: readonly string[];
  readonly outputs: readonly (((value: unknown) => unknown) | undefined)[];
  /** The input position of each output key. */
  readonly positions: readonly number[];
  /** `positions`, when the output has exactly the input's keys (none dropped). */
  readonly order: readonly number[] | undefined;
  /**
   * With `order`: the runs of consecutive input members in output order, as pairs of the first
   * and last member's input position; empty when the output order is the input's.
   */
  readonly runs: readonly number[] | undefined;
  template?: Record<string, unknown>;
}

/** Shapes kept per schema, most recently used first: a source with more key orders is served by `build`. */
const SHAPES_KEPT = 16;

/** The shape of `record`'s key order (the keys `for…in` lists), found among `shapes` or made. */
function shapeOf(shapes: Shape[], record: Record<string, unknown>, make: () => Shape): Shape {
  for (let s = 0; s < shapes.length; s++) {
    const shape = shapes[s]!;
    if (!listsKeys(record, shape.inputKeys)) continue;
    if (s > 0) {
      shapes.splice(s, 1);
      shapes.unshift(shape);
    }
    // Seen before: from now on outputs of this shape are copies of its template.
    // JSON.parse makes an object with fast properties however many keys it has.
    shape.template ??= JSON.parse(JSON.stringify(Object.fromEntries(shape.outputKeys.map((key) => [key, null])))) as Record<string, unknown>;
    return shape;
  }
  const shape = make();
  shapes.unshift(shape);
  if (shapes.length > SHAPES_KEPT) shapes.pop();
  return shape;
}

/** The output of one input as a copy of its shape's template (see Shape). */
function fill(shape: Shape, template: Record<string, unknown>, record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...template };
  const { outputKeys, outputs, positions } = shape;
  // The values by position (the input's own keys are the shape's input keys, in that order, unless
  // for…in also listed inherited ones): one call instead of a lookup by name per key.
  const values = Object.values(record);
  const byPosition = values.length === shape.inputKeys.length;
  for (let i = 0; i < outputKeys.length; i++) {
    const value = byPosition ? values[positions[i]!] : record[outputKeys[i]!];
    const output = outputs[i];
    out[outputKeys[i]!] = output ? output(value) : value;
  }
  return out;
}

/**
 * An element whose text is exactly its JSON (source-json.ts) and whose values the schema keeps
 * as they are (no transform changes one) is handed on itself, in the order the API sent it, as
 * every record is (src/api/api-order.ts): no copy, and its `_raw` is the response text — a copy in
 * zod's order, and its JSON cut and joined from that text, were ~1 ms of each 50-load page. Its
 * content hash still covers zod's order (the pieces of the text in that order, record-json.ts
 * ContentPieces): the same hash as zod's output of the same element has (an element of a small
 * page, a load read by reference), so state written by earlier releases stays valid.
 */
function keptAsSent(shape: Shape, record: Record<string, unknown>, fields: readonly KnownField[], keys: readonly string[]): boolean {
  const source = sourceJsonOf(record);
  if (!source || source.starts.length !== shape.inputKeys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const output = fields[i]!.output;
    if (!output) continue;
    const value = record[keys[i]!];
    if ((value !== undefined || keys[i]! in record) && output(value) !== value) return false;
  }
  knownRecordJson(record, source.text);
  if (shape.runs!.length > 0) knownContentJson(record, { text: source.text, pieces: memberPieces(source, shape.runs!) });
  return true;
}

/**
 * Whether `for…in` lists exactly `keys`, in order, for `record`. Compared as they are listed: the
 * list of a load's ~100 keys, made for each element to look its shape up, was ~2.6 KB of garbage
 * per load.
 */
function listsKeys(record: Record<string, unknown>, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in record) {
    if (i >= keys.length || keys[i] !== key) return false;
    i += 1;
  }
  return i === keys.length;
}

/** What `build` makes of an input with these keys: declared keys present in declaration order, then the others in input order. */
function outputShape(
  keys: readonly string[],
  declared: ReadonlySet<string>,
  outputOf: ReadonlyMap<string, ((value: unknown) => unknown) | undefined>,
  record: Record<string, unknown>,
  inputKeys: readonly string[],
): Shape {
  const outputKeys = [...keys.filter((key) => key in record), ...inputKeys.filter((key) => !declared.has(key) && key !== '__proto__')];
  const positions = outputKeys.map((key) => inputKeys.indexOf(key));
  const order = outputKeys.length === inputKeys.length ? positions : undefined;
  return { inputKeys, outputKeys, outputs: outputKeys.map((key) => outputOf.get(key)), positions, order, runs: order && runsOf(order) };
}

/** Consecutive runs of `order` as [first, last] pairs; none when it is 0, 1, 2, … (nothing moves). */
function runsOf(order: readonly number[]): number[] {
  const runs = memberRuns(order);
  return runs.length === 2 && runs[0] === 0 ? [] : runs;
}
