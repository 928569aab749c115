import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli-process.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';
import { dropPostgresSchema, postgresStateLocation, postgresUrlForTests } from '../helpers/state-db.js';

/**
 * Issue 11, scaling out: a deployment moves its SQLite state to PostgreSQL with `state copy` and
 * goes on from where it was — same checkpoints, nothing delivered again, tokens carried over.
 */
const POSTGRES = await postgresUrlForTests();
let sim: SimulatorHandle;
let dir: string;
const schema = postgresStateLocation(POSTGRES ?? 'postgres://unused').schema;

function writeConfig(file: string, state: Record<string, unknown>): string {
  const configFile = path.join(dir, file);
  fs.writeFileSync(
    configFile,
    stringify({
      api: { variant: 'brokerage', baseUrl: sim.baseUrl, auth: { clientId: sim.options.clientId, clientSecret: '${SIM_SECRET}' }, rateLimit: { requestsPerSecond: 500 } },
      state,
      log: { level: 'warn', pretty: false },
      sync: {
        defaults: { safetyLag: 'PT2S', initialFrom: sim.options.dataStart },
        streams: { loads: { enabled: true, sinks: ['drop'] }, customers: { enabled: true, sinks: ['drop'] } },
      },
      connectors: { drop: { type: 'csv', options: { directory: './out' } } },
    }),
  );
  return configFile;
}

async function cli(args: string[]) {
  const run = runCli(args, { cwd: dir, env: { SIM_SECRET: sim.options.clientSecret } });
  const exit = await run.exited;
  return { code: exit.code, stdout: run.stdout(), stderr: run.stderr() };
}

beforeAll(async () => {
  sim = await startSim({ variant: 'brokerage', loads: 400, customers: 30, consignees: 10 });
  dir = tempDir('state-copy');
});
afterAll(async () => {
  await sim?.close();
  if (POSTGRES) await dropPostgresSchema(POSTGRES, schema);
});

describe.skipIf(POSTGRES === undefined)('freight-sync state copy: SQLite file to PostgreSQL', () => {
  it('copies checkpoints, seen hashes and tokens; the next sync on PostgreSQL delivers nothing again', async () => {
    const onSqlite = writeConfig('sqlite.yaml', { path: './state.sqlite' });
    const onPostgres = writeConfig('postgres.yaml', { url: POSTGRES, schema });
    const first = await cli(['sync', '--json', '-c', onSqlite]);
    expect(first.code, first.stderr).toBe(0);
    const before = JSON.parse((await cli(['status', '--json', '--offline', '-c', onSqlite])).stdout) as { streams: Array<{ stream: string; checkpoint: string | null; recordsKnown: number }> };
    const tokensIssued = sim.stats().tokensIssued;

    const copy = await cli(['state', 'copy', '--to', POSTGRES!, '--schema', schema, '--json', '-c', onSqlite]);
    expect(copy.code, copy.stderr).toBe(0);
    const copied = JSON.parse(copy.stdout) as { tables: Array<{ table: string; rows: number }> };
    const rows = Object.fromEntries(copied.tables.map((t) => [t.table, t.rows]));
    expect(rows['seen_records']).toBe(430);
    expect(rows['tokens']).toBe(1);
    expect(rows['checkpoints']).toBeGreaterThanOrEqual(2);

    const after = JSON.parse((await cli(['status', '--json', '--offline', '-c', onPostgres])).stdout) as typeof before;
    for (const stream of before.streams) expect(after.streams.find((s) => s.stream === stream.stream)).toMatchObject({ checkpoint: stream.checkpoint, recordsKnown: stream.recordsKnown });

    // A second copy onto the populated schema refuses; --force replaces it.
    const again = await cli(['state', 'copy', '--to', POSTGRES!, '--schema', schema, '-c', onSqlite]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds \d+ checkpoint\(s\); pass --force/);
    const forced = await cli(['state', 'copy', '--to', POSTGRES!, '--schema', schema, '--force', '-c', onSqlite]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/seen_records\s+430/);

    // Going on from PostgreSQL: from the same checkpoints and seen hashes (what the lookback
    // re-reads is unchanged, nothing is delivered again), with the copied access token (no new one).
    const next = await cli(['sync', '--json', '-c', onPostgres]);
    expect(next.code, next.stderr).toBe(0);
    const summary = JSON.parse(next.stdout) as Array<{ stream: string; delivered: number; unchanged: number }>;
    for (const stream of summary) expect(stream, stream.stream).toMatchObject({ delivered: 0 });
    expect(summary.reduce((n, s) => n + s.unchanged, 0)).toBeGreaterThan(0);
    expect(sim.stats().tokensIssued).toBe(tokensIssued);
  });
});
