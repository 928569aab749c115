import { maskUrlSecrets, scrubSecrets } from '../../src/util/secrets.js';
import type { SqlOptions } from './options.js';

/** The database could not be reached (or refused the login); the message names it, credentials masked. */
export class SqlConnectError extends Error {
  readonly code: string | undefined;
  constructor(target: string, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    // Drivers quote their connection string in some errors: the detail is masked as well as the target.
    super(`cannot connect to ${target}: ${scrubSecrets(detail) || 'connection failed'}`);
    this.name = 'SqlConnectError';
    const code = (cause as { code?: unknown } | null)?.code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/** `postgres://app:[REDACTED]@db/erp`, or `mysql 127.0.0.1:3306/erp` when the connection is given by parts. */
export function describeSqlTarget(options: SqlOptions): string {
  if (options.dialect === 'sqlite') return `sqlite ${options.filename ?? ':memory:'}`;
  if (options.url !== undefined) return maskUrlSecrets(options.url);
  const port = options.port !== undefined ? `:${options.port}` : '';
  return `${options.dialect} ${options.host ?? 'localhost'}${port}/${options.database ?? ''}`;
}
