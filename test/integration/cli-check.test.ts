import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli-process.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';
import { availableTargets, createTarget, type SqlTarget } from '../helpers/sql-targets.js';

interface CheckOutput {
  ok: boolean;
  checks: Array<{ kind: string; target: string; ok: boolean; detail: string }>;
}

const targets = await availableTargets();

/**
 * `freight-sync check` as a new user runs it (issue 13 acceptance): a config for the simulator
 * and a PostgreSQL sink passes; a broken database connection fails naming the sink; a wrong
 * client secret fails naming the token, and the stream probes say they were not tried.
 */
describe.skipIf(!targets.postgres)('freight-sync check', () => {
  let sim: SimulatorHandle;
  let pg: SqlTarget;
  let dir: string;
  beforeAll(async () => {
    sim = await startSim({ variant: 'main', loads: 30 });
    pg = await createTarget('postgres', targets.postgres, 'check');
    dir = tempDir('cli-check');
  });
  afterAll(async () => {
    await sim?.close();
    await pg?.drop();
  });

  const writeConfig = (name: string, overrides: { secret?: string; pgOptions?: Record<string, unknown> } = {}) => {
    const file = path.join(dir, `${name}.yaml`);
    fs.writeFileSync(
      file,
      stringify({
        api: { variant: 'main', baseUrl: sim.baseUrl, auth: { clientId: sim.options.clientId, clientSecret: overrides.secret ?? sim.options.clientSecret }, retry: { maxAttempts: 2, maxElapsed: 'PT5S' } },
        state: { path: `./${name}.sqlite` },
        log: { level: 'error' },
        sync: { streams: { loads: { sinks: ['erp_db'] }, invoices: { sinks: ['erp_db'] }, customers: { sinks: ['drop'] } } },
        connectors: { erp_db: { type: 'sql', options: overrides.pgOptions ?? pg.options }, drop: { type: 'csv', options: { directory: './out' } } },
      }),
    );
    return file;
  };
  const check = async (config: string) => {
    const cli = runCli(['check', '-c', config, '--json'], { cwd: dir });
    const exit = await cli.exited;
    return { code: exit.code, output: JSON.parse(cli.stdout()) as CheckOutput, stderr: cli.stderr() };
  };

  it('passes for a working deployment: state, token, one probe per stream, every connector', async () => {
    const result = await check(writeConfig('good'));
    expect(result.code, result.stderr).toBe(0);
    expect(result.output.ok).toBe(true);
    const targetsChecked = result.output.checks.map((c) => `${c.kind}:${c.target}`);
    expect(targetsChecked).toEqual(expect.arrayContaining(['state:state database', 'api:token', 'stream:loads', 'stream:invoices', 'stream:customers', 'connector:erp_db', 'connector:drop']));
    expect(result.output.checks.find((c) => c.target === 'loads')!.detail).toMatch(/GET \/loads/);
    // The tables a run would write exist now (created as `run` would).
    const tables = await pg.reader.introspection.getTables();
    expect(tables.map((t) => t.name)).toContain('loads');
  }, 60_000);

  it('fails naming the sink when the database is unreachable, and the rest is still checked', async () => {
    const broken = { ...pg.options, url: String(pg.options['url']).replace(/\/[^/]+$/, '/no_such_database_fs') };
    const result = await check(writeConfig('bad-db', { pgOptions: broken }));
    expect(result.code).toBe(1);
    const failed = result.output.checks.filter((c) => !c.ok);
    expect(failed.map((c) => c.target)).toEqual(['erp_db']);
    expect(failed[0]!.detail).toMatch(/erp_db/);
    expect(failed[0]!.detail).toMatch(/no_such_database_fs/);
    expect(result.output.checks.find((c) => c.target === 'drop')!.ok).toBe(true);
  }, 60_000);

  it('fails naming the token when the client secret is wrong; stream probes are not tried', async () => {
    const result = await check(writeConfig('bad-secret', { secret: 'wrong-secret' }));
    expect(result.code).toBe(1);
    const token = result.output.checks.find((c) => c.target === 'token')!;
    expect(token.ok).toBe(false);
    expect(token.detail).toMatch(/clientId\/clientSecret/);
    expect(result.output.checks.find((c) => c.target === 'loads')!.detail).toBe('not tried: no token');
  }, 60_000);
});
