import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { stringify } from 'yaml';
import { startSimulator, type SimulatorHandle } from '../src/simulator/index.js';
import { simulatorApiConfig } from './simulator-api-config.js';
import { probePostgres } from '../test/helpers/services.js';
import { dropPostgresSchema } from '../test/helpers/state-db.js';
import { freePort, startBuiltCli } from './cli-child.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface IdleAccountsResult {
  accounts: number;
  /** From `run` starting to every account's lease held by it. */
  startSeconds: number;
  windowSeconds: number;
  /** CPU of the replica over the window, % of one core. */
  cpuPercent: number;
  rssMiB: number;
  /** PostgreSQL backends the replica holds (its PGAPPNAME), at the end of the window. */
  connections: number;
  /** API requests over the window, per account and minute. */
  requestsPerAccountMinute: number;
}

function cpuSecondsOf(pid: number): number {
  // /proc/<pid>/stat fields 14 and 15: utime and stime in clock ticks (100 per second on Linux).
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMiBOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/**
 * How much one `freight-sync run` replica spends per idle account: N accounts (main variant, each
 * its own API: a simulator of its own, as each tenant has its own credentials) on PostgreSQL state, the loads stream of each polled every minute into
 * its own CSV drop with the default mapping, nothing changing on the API. After every lease is
 * held and the first passes are done, CPU, RSS, state connections and API requests are measured
 * over `windowSeconds`.
 */
export async function benchIdleAccounts(options: { accounts: number; windowSeconds: number }): Promise<IdleAccountsResult> {
  const probe = await probePostgres();
  if (!probe.ok || !probe.url) throw new Error(`the idle-accounts bench needs PostgreSQL: ${probe.reason}`);
  const sims: SimulatorHandle[] = [];
  for (let i = 0; i < options.accounts; i++) sims.push(await startSimulator({ loads: 40, seed: 11 + i }));
  const requestsNow = () => sims.reduce((n, sim) => n + sim.stats().requests, 0);
  const schema = `fs_bench_idle_${process.pid}_${options.accounts}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-idle-'));
  const appName = `bench-idle-${process.pid}`;
  const client = new pg.Client({ connectionString: probe.url });
  await client.connect();
  let child: ReturnType<typeof startBuiltCli> | undefined;
  try {
    const accounts = [];
    for (let i = 0; i < options.accounts; i++) {
      accounts.push({
        name: `a${String(i).padStart(3, '0')}`,
        api: simulatorApiConfig(sims[i]!, { requestsPerSecond: 8, maxInFlight: 4 }),
        sync: { streams: { loads: { enabled: true, sinks: ['out'] } } },
        connectors: { out: { type: 'csv', options: { directory: path.join(dir, 'out', String(i)) } } },
      });
    }
    const httpPort = await freePort();
    const configFile = path.join(dir, 'freight-sync.yaml');
    fs.writeFileSync(
      configFile,
      stringify({
        state: { url: probe.url, schema, poolSize: 10 },
        log: { level: 'warn', pretty: false },
        http: { enabled: true, listen: `127.0.0.1:${httpPort}` },
        sync: { defaults: { schedule: '* * * * *', initialFrom: sims[0]!.options.dataStart } },
        accounts,
      }),
    );
    const started = Date.now();
    child = startBuiltCli(['run', '-c', configFile], { env: { PGAPPNAME: appName }, logFile: path.join(dir, 'run.log'), cwd: dir });
    const held = async () => {
      const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
      return (text.match(/^freight_sync_lease_held\{account="a\d+"\} 1$/gm) ?? []).length;
    };
    for (;;) {
      if (child.child.exitCode !== null) throw new Error(`run exited: ${child.output().slice(-2000)}`);
      if ((await held().catch(() => 0)) === options.accounts) break;
      if (Date.now() - started > 30 * 60_000) throw new Error('not every lease held after 30 min');
      await sleep(500);
    }
    const startSeconds = (Date.now() - started) / 1000;
    // The first passes (the initial backfill of 40 loads per account) settle before measuring.
    await sleep(20_000);
    const pid = child.child.pid!;
    const cpu0 = cpuSecondsOf(pid);
    const requests0 = requestsNow();
    const t0 = Date.now();
    await sleep(options.windowSeconds * 1000);
    const elapsed = (Date.now() - t0) / 1000;
    const cpu = cpuSecondsOf(pid) - cpu0;
    const requests = requestsNow() - requests0;
    const { rows } = await client.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where application_name = $1', [appName]);
    return {
      accounts: options.accounts,
      startSeconds,
      windowSeconds: elapsed,
      cpuPercent: (cpu / elapsed) * 100,
      rssMiB: rssMiBOf(pid),
      connections: rows[0]!.n,
      requestsPerAccountMinute: requests / options.accounts / (elapsed / 60),
    };
  } finally {
    if (child && child.child.exitCode === null) {
      child.child.kill('SIGTERM');
      await child.exited;
    }
    await client.end().catch(() => undefined);
    for (const sim of sims) await sim.close();
    for (const s of [schema, ...Array.from({ length: options.accounts }, (_, i) => `${schema}_a${String(i).padStart(3, '0')}`)]) await dropPostgresSchema(probe.url, s);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
