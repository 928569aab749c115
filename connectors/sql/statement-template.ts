import { CompiledQuery } from 'kysely';

/**
 * A statement compiled by Kysely once, with slots where a batch's values go, then bound per batch.
 * Kysely binds any value it is given as a parameter (never inlines it), so a slot lands exactly
 * where the value would, in the same text. Building Kysely's tree for ~5,000 values and compiling
 * it per batch was ~15% of the PostgreSQL sink's CPU (and much of its garbage).
 */

/** A value's place in a batch statement: the index of the value in the batch's list. */
export class Slot {
  constructor(readonly index: number) {}
}

export interface StatementTemplate {
  readonly sql: string;
  /** The compiled parameters: anything that is not a batch value (the stream name) as it is. */
  readonly parameters: readonly unknown[];
  /** For each parameter, the index of its value in the batch's list; -1: a constant from `parameters`. */
  readonly places: Int32Array;
}

/** The template of a statement compiled with `slots` count slots; undefined when a slot did not arrive as a parameter. */
export function templateOf(compiled: CompiledQuery, slots: number): StatementTemplate | undefined {
  // Every value must arrive as a parameter (some more than once); were one ever inlined or transformed, there is no template.
  if (new Set(compiled.parameters.filter((p) => p instanceof Slot)).size !== slots) return undefined;
  const places = Int32Array.from(compiled.parameters, (p) => (p instanceof Slot ? p.index : -1));
  return { sql: compiled.sql, parameters: compiled.parameters.map((p) => (p instanceof Slot ? undefined : p)), places };
}

/** The template's statement with a batch's values in its slots. */
export function bindTemplate(template: StatementTemplate, values: readonly unknown[]): CompiledQuery {
  const { places, parameters } = template;
  const bound = new Array<unknown>(places.length);
  for (let i = 0; i < places.length; i += 1) {
    const place = places[i]!;
    bound[i] = place >= 0 ? values[place] : parameters[i];
  }
  return CompiledQuery.raw(template.sql, bound);
}
