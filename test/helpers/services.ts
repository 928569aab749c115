import os from 'node:os';

/**
 * Services the integration tests need (a loopback sshd, PostgreSQL, MariaDB). On a laptop a
 * missing service skips its tests with a loud warning; in CI (`CI=true`) it is a failure, so a
 * broken service can never turn a red suite green by skipping.
 */
export interface ServiceProbe {
  readonly ok: boolean;
  /** Why the service is not usable, when `ok` is false. */
  readonly reason?: string;
}

/**
 * True when the probe found the service. Otherwise warns and returns false (tests skip), or
 * throws when `CI=true`. Call at the top level of a test file and gate with `describe.skipIf`.
 */
export function requireService(name: string, probe: ServiceProbe): boolean {
  if (probe.ok) return true;
  const message = `${name} is not available: ${probe.reason ?? 'unknown reason'}`;
  if (process.env.CI === 'true') throw new Error(`${message} (CI=true: a missing service is a failure, not a skip)`);
  console.warn(`\n⚠️  SKIPPING tests: ${message} (they fail when CI=true)\n`);
  return false;
}

/* ------------------------------------------------------------------ database servers */

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const MARIADB_URL = process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';

export interface UrlProbe extends ServiceProbe {
  /** A URL that connected (for PostgreSQL possibly with the current OS user instead of `postgres`). */
  readonly url?: string;
}

/** PostgreSQL at TEST_POSTGRES_URL (default 127.0.0.1:5432, user postgres or the current user, database test). */
export async function probePostgres(): Promise<UrlProbe> {
  const { default: pg } = await import('pg');
  const candidates = [POSTGRES_URL];
  if (!process.env.TEST_POSTGRES_URL) candidates.push(POSTGRES_URL.replace('postgres@', `${encodeURIComponent(os.userInfo().username)}@`));
  let reason = '';
  for (const url of candidates) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('select 1');
      return { ok: true, url };
    } catch (error) {
      reason = `${POSTGRES_URL}: ${(error as Error).message}`;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return { ok: false, reason };
}

/** MariaDB/MySQL at TEST_MARIADB_URL (default 127.0.0.1:3306, root with an empty password, database test). */
export async function probeMariadb(): Promise<UrlProbe> {
  const mysql = await import('mysql2/promise');
  try {
    const connection = await mysql.createConnection({ uri: MARIADB_URL, connectTimeout: 3000 });
    await connection.query('select 1');
    await connection.end();
    return { ok: true, url: MARIADB_URL };
  } catch (error) {
    return { ok: false, reason: `${MARIADB_URL}: ${(error as Error).message}` };
  }
}
