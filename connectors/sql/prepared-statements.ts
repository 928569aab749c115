import type pg from 'pg';

/**
 * Named (server-side prepared) statements for the batch statement on PostgreSQL.
 *
 * A clean batch is one statement of ~6,000 parameters and ~45 KB of text (batch-statement.ts),
 * the same text for every batch of one shape. Sent unnamed, PostgreSQL parses, analyses and plans
 * that text for every batch: ~5 ms of the server's time per batch of 50 loads on loopback, about
 * a fifth of the batch. Named, it is parsed once per connection and each batch only binds its
 * values (pg sends Parse only the first time a name is used on a client). Same text, same
 * parameters, same result: only the protocol differs.
 *
 * Each execution is still planned with the tables' current sizes (`forceCustomPlans`).
 *
 * A prepared statement of that size holds ~1.7 MB of the server's memory for as long as its
 * connection lives, so each connection prepares at most `PER_CONNECTION` texts; later shapes go
 * unnamed, as before. Texts are named once they recur (`markPreparable`, on a template cache hit),
 * so a one-off shape never takes a place.
 *
 * The array form of the statement (unnest-statement.ts), used wherever the stream's column types
 * allow it, is one ~6 KB text per stream whatever the batch's row counts: it is marked from its
 * first batch and takes one place per stream.
 */

/** Prepared texts per connection (~1.7 MB of server memory each at the default loads mapping). */
const PER_CONNECTION = 8;
/** Texts remembered as worth preparing, process-wide (the templates themselves are bounded too). */
const MAX_TEXTS = 256;

const names = new Map<string, string>();
let sequence = 0;

/** Marks a statement text as one that recurs: PostgreSQL connections run it as a named statement. */
export function markPreparable(text: string): void {
  if (names.has(text)) return;
  if (names.size >= MAX_TEXTS) names.delete(names.keys().next().value!);
  sequence += 1;
  // Unique per process and never reused: pg refuses one name for two texts on a client.
  names.set(text, `freight_sync_batch_${sequence}`);
}

/**
 * A pg `Client` class (for the pool's `Client` option) that runs texts marked preparable as named
 * statements, up to `PER_CONNECTION` of them per connection. Everything else passes through.
 */
export function preparingClient(Base: typeof pg.Client): typeof pg.Client {
  return class PreparingClient extends Base {
    private readonly prepared = new Set<string>();
    /** Set once the connection plans every execution afresh (see `forceCustomPlans`). */
    private customPlans = false;

    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's constructor takes a config object or a connection string
    constructor(...args: any[]) {
      super(...(args as [pg.ClientConfig]));
      this.once('connect', () => this.forceCustomPlans());
    }

    /**
     * After five executions PostgreSQL may switch a prepared statement to a generic plan, chosen
     * once and kept until the tables' statistics change; the batch statement's tables grow
     * fast, so each execution is planned afresh with the current sizes, as an unnamed statement
     * is: only parsing is saved. The setting affects this connection's prepared statements only
     * (Kysely sends none). Where it is refused (PostgreSQL before 12), statements stay unnamed.
     */
    private forceCustomPlans(): void {
      (super.query('SET plan_cache_mode = force_custom_plan') as Promise<unknown>).then(
        () => (this.customPlans = true),
        () => undefined,
      );
    }

    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's query has a dozen overloads; this only inspects (text, values)
    override query(...args: any[]): any {
      const [text, values] = args;
      if (this.customPlans && args.length === 2 && typeof text === 'string' && Array.isArray(values)) {
        const name = names.get(text);
        if (name !== undefined && (this.prepared.has(name) || this.prepared.size < PER_CONNECTION)) {
          this.prepared.add(name);
          return super.query({ name, text, values });
        }
      }
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
  } as typeof pg.Client;
}
