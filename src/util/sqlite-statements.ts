import type Database from 'better-sqlite3';

/**
 * Prepared statements kept per SQL text, most recently used last. Kysely's SQLite driver prepares
 * every query it runs; the engine (state store) and the SQL sink run the same statements batch
 * after batch, and preparing them again was ~7% of a backfill's CPU with the SQLite sink. Kysely
 * runs one query at a time on its single connection and never leaves a statement iterating while
 * another runs, so sharing one statement per text is safe; the bound keeps texts that vary
 * (multi-row inserts of different sizes) from piling up.
 */
export function statementCache(prepare: (source: string) => Database.Statement, size = 200): (source: string) => Database.Statement {
  const statements = new Map<string, Database.Statement>();
  return (source) => {
    const cached = statements.get(source);
    if (cached) {
      statements.delete(source);
      statements.set(source, cached);
      return cached;
    }
    const statement = prepare(source);
    statements.set(source, statement);
    if (statements.size > size) statements.delete(statements.keys().next().value!);
    return statement;
  };
}

/** The connection with `prepare` answered from a statement cache (everything else untouched). */
export function withStatementCache(sqlite: Database.Database, size?: number): Database.Database {
  const prepare = statementCache((source) => sqlite.prepare(source), size);
  return new Proxy(sqlite, {
    get(inner, name) {
      if (name === 'prepare') return prepare;
      const value: unknown = Reflect.get(inner, name, inner);
      // Native methods need the real object as `this`, never the proxy.
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(inner) : value;
    },
  });
}
