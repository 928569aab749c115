import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../helpers/cli-process.js';

/**
 * Commands load only what they use (issue 14): `--help` and every command's own `--help` must not
 * load the libraries the commands' work needs. The built CLI runs with a module hook (passed in
 * NODE_OPTIONS) that writes down every module it resolves; the test reads that list. No memory or
 * timing figure is asserted here: `npm run bench -- --only=memory` measures the RSS.
 */

/** Packages a command's work needs and a help screen must not load. */
const HEAVY = ['axios', 'kysely', 'zod', 'prom-client', 'pino', 'yaml', 'better-sqlite3', 'cli-progress', 'luxon', 'nodemailer', 'csv-stringify', 'csv-parse', 'node-cron', 'undici', 'pg', 'mysql2', 'ssh2-sftp-client', 'big.js'];

let dir: string;
let record: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-lazy-imports-'));
  // The hook runs in Node's loader thread; appending synchronously keeps every resolution, even when the process exits at once.
  fs.writeFileSync(
    path.join(dir, 'hooks.mjs'),
    "import fs from 'node:fs';\nexport async function resolve(specifier, context, next) {\n  const resolved = await next(specifier, context);\n  fs.appendFileSync(process.env.FREIGHT_SYNC_TEST_IMPORTS, `${resolved.url}\\n`);\n  return resolved;\n}\n",
  );
  fs.writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
  record = path.join(dir, 'imports.txt');
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs the built CLI and returns the npm packages it loaded (by name) and its exit code. */
async function packagesLoaded(args: string[]): Promise<{ code: number | null; packages: Set<string>; stderr: string }> {
  fs.rmSync(record, { force: true });
  const run = runCli(args, {
    cwd: dir,
    env: { NODE_OPTIONS: `--import=${pathToFileURL(path.join(dir, 'register.mjs')).href}`, FREIGHT_SYNC_TEST_IMPORTS: record },
  });
  const { code } = await run.exited;
  const urls = fs.existsSync(record) ? fs.readFileSync(record, 'utf8').split('\n').filter(Boolean) : [];
  const packages = new Set(
    urls
      .map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
      .filter((name): name is string => name !== undefined),
  );
  return { code, packages, stderr: run.stderr() };
}

describe('the CLI loads only what a command uses', () => {
  it('`--help` loads commander and none of the libraries the commands work with', async () => {
    const { code, packages } = await packagesLoaded(['--help']);
    expect(code).toBe(0);
    expect([...packages].sort()).toEqual(['commander']);
  });

  it.each(['sync', 'run', 'validate-config', 'simulate', 'rejected retry'])('`%s --help` loads none of them either', async (command) => {
    const { code, packages } = await packagesLoaded([...command.split(' '), '--help']);
    expect(code).toBe(0);
    expect(HEAVY.filter((name) => packages.has(name))).toEqual([]);
  });

  it('a usage error in a flag is reported before the command loads its work', async () => {
    const { code, packages, stderr } = await packagesLoaded(['backfill', '--from', 'yesterday-ish']);
    expect(code).toBe(2);
    expect(stderr).toContain('--from: expected an ISO 8601 date');
    expect(HEAVY.filter((name) => packages.has(name))).toEqual([]);
  });

  it('the command that runs loads what it needs (the recorder sees lazy imports)', async () => {
    const file = path.join(dir, 'freight-sync.yaml');
    fs.writeFileSync(
      file,
      stringify({
        api: { variant: 'main', baseUrl: 'http://127.0.0.1:9/v1', auth: { clientId: 'c', clientSecret: 'not-a-real-secret' } },
        state: { path: './state/freight-sync.sqlite' },
        log: { level: 'silent' },
        sync: { streams: { loads: { sinks: ['drop'] } } },
        connectors: { drop: { type: 'csv', options: { directory: './out' } } },
      }),
    );
    const { code, packages, stderr } = await packagesLoaded(['validate-config', '-c', file]);
    expect(code, stderr).toBe(0);
    expect(packages.has('zod')).toBe(true);
    expect(packages.has('yaml')).toBe(true);
  });
});
