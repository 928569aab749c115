import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DriverMissingError, loadDriver } from '../../src/util/optional-driver.js';

/** Real imports: a package that is not installed, one that is, and an installed module whose own import is missing. */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'optional-driver-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('loadDriver', () => {
  it('names the missing package, what needs it and how to get it', async () => {
    const name = 'freight-sync-no-such-driver';
    const error = await loadDriver(name, 'the sql connector with dialect mssql', () => import(name)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DriverMissingError);
    const missing = error as DriverMissingError;
    expect(missing.code).toBe('DRIVER_MISSING');
    expect(missing.packageName).toBe(name);
    expect(missing.message).toContain(`the sql connector with dialect mssql needs the npm package "${name}"`);
    expect(missing.message).toContain(`npm install ${name}`);
    expect(missing.message).toContain('DRIVERS');
  });

  it('returns the module when the package is installed', async () => {
    const pg = await loadDriver('pg', 'postgres', () => import('pg'));
    expect(typeof pg.default.Pool).toBe('function');
  });

  it('passes through a missing import inside the driver itself (that is a broken install, not an absent driver)', async () => {
    const file = path.join(dir, 'broken-driver.mjs');
    fs.writeFileSync(file, "import 'freight-sync-missing-transitive-dep';\nexport default 1;\n");
    const error = await loadDriver('broken-driver', 'test', () => import(pathToFileURL(file).href)).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(DriverMissingError);
    expect((error as Error).message).toContain('freight-sync-missing-transitive-dep');
  });
});
