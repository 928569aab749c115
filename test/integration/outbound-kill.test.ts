import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { csvKey, writeCreatesCsv } from '../helpers/outbound-fixtures.js';
import { loadsByErpKey } from '../helpers/outbound-harness.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

const BIN = path.resolve('dist/src/cli/bin.js');
const N = 600;

function runCli(args: string[], cwd: string): { child: ChildProcess; done: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const done = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  done.then(() => fs.writeFileSync(path.join(cwd, `cli-${Date.now()}.log`), output)).catch(() => undefined);
  return { child, done };
}

function doneCount(statePath: string): number {
  if (!fs.existsSync(statePath)) return 0;
  const db = new Database(statePath, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("select name from sqlite_master where name = 'outbox'").all();
    if (tables.length === 0) return 0;
    return (db.prepare("select count(*) as n from outbox where state = 'done'").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * `kill -9` in the middle of a push (the compiled CLI as a child process), then a rerun: still
 * exactly one load per ERP key, and the rerun writes back every reference number. Needs
 * `npm run build` first (dist/). Brokerage runs against the strict simulator (multipart only).
 */
describe.skipIf(!fs.existsSync(BIN)).each(['main', 'brokerage'] as const)('outbound push survives kill -9, %s', (variant) => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({
      variant,
      strictEncoding: variant === 'brokerage',
      loads: 200,
      customers: 10,
      consignees: 5,
      ambiguousCreateRate: 0.2,
      faults: { rate: 0.1, kinds: ['500', '502', 'drop', 'truncated'], slowMs: 0 },
    });
  });
  afterAll(async () => sim.close());

  it('reconciles the commands in flight at the kill and never creates a load twice', async () => {
    const dir = tempDir(`outbound-kill-${variant}`);
    let caller = '';
    for await (const c of sim.truth('customers')) {
      caller = String(c['_id']);
      break;
    }
    let consignee = '';
    for await (const c of sim.truth('consignees')) {
      consignee = String(c['_id']);
      break;
    }
    const config = {
      api: {
        variant,
        baseUrl: sim.baseUrl,
        auth: { clientId: sim.options.clientId, clientSecret: sim.options.clientSecret },
        // Slow enough to kill it half-way.
        rateLimit: { requestsPerSecond: 80, maxInFlight: 8 },
        retry: { maxAttempts: 12, baseDelay: 'PT0.02S', maxDelay: 'PT0.5S', maxElapsed: 'PT2M' },
        timeout: 'PT5S',
      },
      state: { path: './state.sqlite' },
      log: { level: 'warn', pretty: false },
      connectors: { erp_inbox: { type: 'inbox', options: { dir: './inbox' } } },
      outbound: { enabled: true, sources: ['erp_inbox'], concurrency: 8, backoff: { base: 'PT0.05S', max: 'PT1S' }, reconcileDelay: 'PT0.2S' },
    };
    fs.writeFileSync(path.join(dir, 'freight-sync.yaml'), stringify(config));
    writeCreatesCsv(path.join(dir, 'inbox', 'orders.csv'), N, csvKey, variant);
    // ERP codes need the customers stream; this file uses the caller's (and consignee's) API id instead.
    const csv = fs
      .readFileSync(path.join(dir, 'inbox', 'orders.csv'), 'utf8')
      .replaceAll('CUS000001', caller)
      .replaceAll('CUS000002;CUS000003', caller)
      .replaceAll('CON000001', consignee);
    fs.writeFileSync(path.join(dir, 'inbox', 'orders.csv'), csv);
    fs.writeFileSync(path.join(dir, 'inbox', 'orders.csv.done'), '');

    const first = runCli(['push', '-c', 'freight-sync.yaml'], dir);
    const statePath = path.join(dir, 'state.sqlite');
    const deadline = Date.now() + 60_000;
    while (doneCount(statePath) < N / 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const killedAt = doneCount(statePath);
    first.child.kill('SIGKILL');
    expect(await first.done).toBeNull();
    expect(killedAt).toBeGreaterThanOrEqual(N / 4);
    expect(killedAt).toBeLessThan(N + N / 10 + N / 20);

    const second = runCli(['push', '-c', 'freight-sync.yaml'], dir);
    expect(await second.done).toBe(0);

    const keys = Array.from({ length: N }, (_, i) => csvKey(i + 1));
    const truth = await loadsByErpKey(sim, keys);
    expect(truth.size).toBe(N);
    expect([...truth.values()].filter((loads) => loads.length !== 1)).toHaveLength(0);

    const resultFile = path.join(dir, 'inbox', 'processed', 'orders.csv.result.csv');
    const results = parse(fs.readFileSync(resultFile, 'utf8'), { columns: true }) as Array<Record<string, string>>;
    const lines = fs.readFileSync(path.join(dir, 'inbox', 'processed', 'orders.csv'), 'utf8').split('\r\n');
    expect(results).toHaveLength(N + N / 10 + N / 20);
    for (const row of results) {
      const key = lines[Number(row['ref']) - 1]!.split(',')[0]!;
      expect(row['status']).toBe('done');
      expect(row['reference_number']).toBe(truth.get(key)![0]!['reference_number']);
    }
  });
});
