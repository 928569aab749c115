import { CompiledQuery, type Compilable, type QueryResult } from 'kysely';
import type { StateExecutor } from './checkpoint-store.js';

/**
 * SQL texts of the multi-row statements the engine runs for every page (the content hashes of 50
 * records upserted, 50 keys looked up): Kysely builds and compiles a statement of a given shape
 * (which statement, how many rows) once, and later ones of that shape run the same text with their
 * own parameters. Building a 50-row insert node by node and compiling it, page after page, was
 * most of the 0.5–0.7 ms of CPU per page Kysely took. A shape's text is kept only when Kysely's own
 * parameters for it were exactly those given for it (row after row, in column order); otherwise
 * that shape is built by Kysely every time, as before.
 *
 * One instance per database (a text is in that database's SQL dialect), shared by the stores bound
 * to its transactions.
 */
/**
 * Shapes kept per database. Pages bring the same few row counts again and again; targeted
 * deliveries (webhooks) bring others, whose texts (up to ~900 keys each) are not worth keeping
 * without bound: past this many, a new shape is built by Kysely every time.
 */
const MAX_SHAPES = 64;

export class StatementTexts {
  private readonly texts = new Map<string, string | null>();

  async execute<R>(executor: StateExecutor, shape: string, parameters: readonly unknown[], build: () => Compilable<R>): Promise<QueryResult<R>> {
    const text = this.texts.get(shape);
    if (text) return executor.executeQuery<R>(CompiledQuery.raw(text, [...parameters]));
    const compiled = build().compile();
    if (text === undefined && this.texts.size < MAX_SHAPES) this.texts.set(shape, sameValues(compiled.parameters, parameters) ? compiled.sql : null);
    return executor.executeQuery<R>(compiled);
  }

  /** The shapes run from a kept text (diagnostics and tests). */
  kept(): string[] {
    return [...this.texts].filter(([, text]) => text !== null).map(([shape]) => shape);
  }
}

function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
