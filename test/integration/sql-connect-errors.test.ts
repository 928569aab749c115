import { describe, expect, it } from 'vitest';
import { sqlConnector, sqlOptionsSchema, SqlConnectError } from '../../connectors/sql/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { mappersOf } from '../helpers/mappers.js';
import { probeMariadb, probePostgres, requireService } from '../helpers/services.js';

const pg = await probePostgres();
const maria = await probeMariadb();
const servers = [
  ['postgres', requireService('PostgreSQL', pg) ? pg.url : undefined],
  ['mysql', requireService('MariaDB', maria) ? maria.url : undefined],
] as const;

/** A URL of the live server with a password added and a database that does not exist: the login or the database is refused. */
function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.password = password;
  parsed.pathname = '/fs_no_such_database_realdata';
  return parsed.toString();
}

describe('sql connector: connection errors', () => {
  for (const [dialect, url] of servers) {
    it.skipIf(!url)(`${dialect}: names the database with the password of its url masked`, async () => {
      const password = 'Pw-in-url-123';
      const options = sqlOptionsSchema.parse({ dialect, url: withPassword(url!, password) });
      const instance = await sqlConnector.create(options, { instanceName: 'erp', logger: silentLogger(), baseDir: process.cwd(), mappings: mappersOf([]) });
      try {
        const error = await instance.init!(new AbortController().signal).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(SqlConnectError);
        const message = (error as Error).message;
        expect(message).not.toContain(password);
        expect(message).toMatch(new RegExp(`^cannot connect to ${dialect === 'postgres' ? 'postgres' : 'mysql'}://[^:]+:\\[REDACTED\\]@127\\.0\\.0\\.1:\\d+/fs_no_such_database_realdata: .+`));
      } finally {
        await instance.close?.();
      }
    });
  }
});
