import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli-process.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

/** `freight-sync sink migrate` as a user runs it, against an SQLite sink whose column an older version typed differently. */
let sim: SimulatorHandle;
let dir: string;
let configFile: string;

beforeAll(async () => {
  sim = await startSim({ variant: 'main', loads: 20, customers: 10, consignees: 5, bills: 5, supportMoves: 5 });
  dir = tempDir('cli-migrate');
  configFile = path.join(dir, 'freight-sync.yaml');
  fs.writeFileSync(
    configFile,
    stringify({
      api: { variant: 'main', baseUrl: sim.baseUrl, auth: { clientId: sim.options.clientId, clientSecret: sim.options.clientSecret } },
      state: { path: './state.sqlite' },
      log: { level: 'warn', pretty: false },
      sync: { streams: { customers: { enabled: true, sinks: ['erp', 'drop'] } } },
      connectors: { erp: { type: 'sql', options: { dialect: 'sqlite', filename: './erp.sqlite' } }, drop: { type: 'csv', options: { directory: './out' } } },
    }),
  );
});
afterAll(async () => {
  await sim?.close();
});

async function cli(args: string[]) {
  const run = runCli(args, { cwd: dir, env: {} });
  const exit = await run.exited;
  return { code: exit.code, stdout: run.stdout(), stderr: run.stderr() };
}

describe('freight-sync sink migrate', () => {
  it('lists the type change with its statements, applies it with --apply, then has nothing left', async () => {
    const fresh = await cli(['sink', 'migrate', '-c', configFile]);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stdout).toContain('erp: every table has the column types this version writes');
    expect(fresh.stdout).toContain('drop: nothing to migrate');

    // What an older version left: money as a float column.
    const db = new Database(path.join(dir, 'erp.sqlite'));
    db.exec('alter table customers drop column balance; alter table customers add column balance real;');
    db.close();

    const listed = await cli(['sink', 'migrate', '--connector', 'erp', '-c', configFile]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('erp: 1 table(s) need a type change');
    expect(listed.stdout).toContain('balance: real -> text');
    expect(listed.stdout).toMatch(/create table if not exists "customers__migrate"/);
    expect(listed.stdout).toContain('Run again with --apply');

    const applied = await cli(['sink', 'migrate', '--apply', '-c', configFile]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('erp: 1 table(s) migrated');
    const after = await cli(['sink', 'migrate', '-c', configFile]);
    expect(after.stdout).toContain('erp: every table has the column types this version writes');

    const unknown = await cli(['sink', 'migrate', '--connector', 'nope', '-c', configFile]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--connector: "nope" is not a sink of an enabled stream (sinks: erp, drop)');
  });
});
