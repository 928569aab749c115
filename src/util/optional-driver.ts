import { FreightSyncError } from './errors.js';

/**
 * A database or SFTP driver that is not installed. The drivers (pg, mysql2, tedious,
 * ssh2-sftp-client) are loaded only when a connector of that kind is configured, and the container
 * image holds only the ones chosen with its DRIVERS build argument: the message says which package
 * is missing, for what, and both ways to get it.
 */
export class DriverMissingError extends FreightSyncError {
  constructor(
    readonly packageName: string,
    purpose: string,
    cause: unknown,
  ) {
    super(
      'DRIVER_MISSING',
      `${purpose} needs the npm package "${packageName}", which is not installed: ` +
        `run \`npm install ${packageName}\` next to freight-sync, or build the container image with it (--build-arg DRIVERS=…, see README "Container")`,
      { cause },
    );
  }
}

/** True when `error` says that `packageName` itself (not one of its own imports) cannot be found. */
function isMissingPackage(error: unknown, packageName: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  const message = error instanceof Error ? error.message : String(error);
  return message.includes(`'${packageName}'`) || message.includes(`"${packageName}"`);
}

/**
 * Imports an optional driver when it is first needed. `load` is a literal `() => import('pg')`, so
 * TypeScript keeps the module's types; a missing package becomes a DriverMissingError naming it.
 */
export async function loadDriver<T>(packageName: string, purpose: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissingPackage(error, packageName)) throw new DriverMissingError(packageName, purpose, error);
    throw error;
  }
}
