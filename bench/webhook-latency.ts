import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { stringify } from 'yaml';
import { startSimulator, type SimulatorHandle } from '../src/simulator/index.js';
import { simulatorApiConfig } from './simulator-api-config.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** `BENCH_DAEMON_CLI`: another build's `dist/src/cli/bin.js` (a before/after comparison runs one bench against two daemons). */
const CLI = process.env['BENCH_DAEMON_CLI'] ?? path.resolve(here, '../src/cli/bin.js');
/** `BENCH_DAEMON_NODE_ARGS`: node flags for the daemon only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). */
const DAEMON_NODE_ARGS = (process.env['BENCH_DAEMON_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
/** `BENCH_DAEMON_LOG=debug:/tmp/daemon.log`: the daemon's log level, and a file its log lines are appended to (profiling). */
const [DAEMON_LOG_LEVEL, DAEMON_LOG_FILE] = (process.env['BENCH_DAEMON_LOG'] ?? 'warn').split(':');
const SECRET = 'bench-webhook-secret-5d1e';
export interface LatencyStats {
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

export interface WebhookLatencyResult {
  /** The pace asked for: deliveries (events of every family) per second. */
  targetPerSecond: number;
  /** The pace reached: events the simulator emitted per second while the mutator ran. */
  eventsPerSecond: number;
  /** Load events among them (each one a change of a load the CSV sink must receive). */
  loadEvents: number;
  /** Change → sink: the first CSV file holding the change − when the load changed (its new updatedAt). */
  changeToSink: LatencyStats;
  /** Receipt → sink: the same file − when the simulator sent the delivery the daemon answered 200. */
  receiptToSink: LatencyStats;
  /** Receipt → 200: how long the receiver took to commit the event and answer. */
  receiptToAnswer: LatencyStats;
  /** Load events whose change never reached the CSV sink (must be 0). */
  missing: number;
  /** CPU seconds the daemon used from the first event to the inbox worked off, per 1,000 events (independent of how loaded the machine is). */
  daemonCpuPer1000Events: number;
}

/**
 * Webhook latency end to end at a steady pace of `perSecond` events (deliveries) per second:
 * `freight-sync run` (a child process, webhooks on, polling off with a yearly cron, the CSV
 * connector with its DEFAULT mappings) receives the simulator's signed webhooks while the bench
 * runs mutator steps so that the events emitted keep up with `perSecond` × elapsed time (a step
 * can change a whole tie group of loads at once: the pace is steady on average, bursty up close).
 * Per load event, from the simulator's own timing (`eventTimings`, simulator-only: the API's
 * event has no change time): change → sink = mtime of the first CSV file holding the load at or
 * after the change − the change time; receipt → sink = the same mtime − when the delivery that was
 * answered 200 was sent (a change already in the sink when its own event arrives counts 0).
 * Server clock and file times are the same host's clock (no offset configured). Moved here from
 * the integration suite: a timed assertion does not belong in tests that run on a loaded machine;
 * the test keeps asserting that every change arrives.
 */
export async function benchWebhookLatency(options: { perSecond: number; seconds?: number }): Promise<WebhookLatencyResult> {
  const seconds = options.seconds ?? 30;
  const sim = await startSimulator({ variant: 'main', seed: 11, loads: 3000, clientId: 'bench', clientSecret: 'bench-secret' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-webhooks-'));
  let run: WebhookRun | undefined;
  try {
    // The simulator on loopback has no limit; the client's is set high so the refresh fetches are not what is measured.
    run = await startWebhookRun(sim, dir, { requestsPerSecond: 2000, streams: ['loads', 'invoices', 'events'] });
    const { url, out, statePath } = run;
    sim.configure({ webhooks: { url, secret: SECRET } });
    const before = sim.eventTimings().length;
    const cpuBefore = run.cpuSeconds();
    const started = Date.now();
    // Paced from here, not by the simulator's timer: steps are taken while the events emitted
    // trail the pace, so the rate is the one asked for whatever a step emits.
    while (Date.now() - started < seconds * 1000) {
      const due = ((Date.now() - started) / 1000) * options.perSecond;
      while (sim.eventTimings().length - before < due) await sim.mutate(1);
      await new Promise((r) => setTimeout(r, 10));
    }
    const emitted = sim.eventTimings().length - before;
    const elapsed = (Date.now() - started) / 1000;
    // Nothing changes any more: every delivery made, then the inbox worked off.
    await sim.webhooksIdle();
    await until(() => inboxCount(statePath, "state = 'pending'") === 0, 120_000, 'the inbox is worked off');
    const daemonCpu = run.cpuSeconds() - cpuBefore;

    const timings = new Map(sim.eventTimings().map((t) => [t._id, t]));
    const events: Array<{ ref: string; changedAt: number; sentAt: number; answeredAt: number }> = [];
    for await (const e of sim.truth('webhookEvents')) {
      const data = e['data'] as Record<string, unknown> | undefined;
      const timing = timings.get(Number(e['_id']));
      if (!timing || !String(e['eventType']).startsWith('load#') || !data?.['reference_number']) continue;
      if (timing.sentAt === null || timing.answeredAt === null) throw new Error(`bench: event ${String(e['_id'])} was never delivered`);
      events.push({ ref: String(data['reference_number']), changedAt: Date.parse(timing.changedAt), sentAt: Date.parse(timing.sentAt), answeredAt: Date.parse(timing.answeredAt) });
    }
    const byKey = rowsByKey(out, 'loads');
    const changeToSink: number[] = [];
    const receiptToSink: number[] = [];
    const receiptToAnswer: number[] = [];
    let missing = 0;
    for (const event of events) {
      receiptToAnswer.push(event.answeredAt - event.sentAt);
      // The change time is the load's new updatedAt, to the millisecond: the row that carries it (or a later one).
      const landed = (byKey.get(event.ref) ?? []).filter((r) => r.updated >= event.changedAt).map((r) => r.mtime);
      if (landed.length === 0) {
        missing++;
        continue;
      }
      const first = Math.min(...landed);
      changeToSink.push(first - event.changedAt);
      receiptToSink.push(Math.max(0, first - event.sentAt));
    }
    await run.stop();
    return {
      targetPerSecond: options.perSecond,
      eventsPerSecond: emitted / elapsed,
      loadEvents: events.length,
      changeToSink: stats(changeToSink),
      receiptToSink: stats(receiptToSink),
      receiptToAnswer: stats(receiptToAnswer),
      missing,
      daemonCpuPer1000Events: (daemonCpu / emitted) * 1000,
    };
  } finally {
    run?.kill();
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function stats(values: readonly number[]): LatencyStats {
  return { p50Ms: percentile(values, 50), p95Ms: percentile(values, 95), maxMs: values.length ? Math.max(...values) : Number.NaN };
}

export interface WebhookBurstResult {
  events: number;
  loads: number;
  /** The simulator's (and the client's) limit, requests per second. */
  rateLimit: number;
  /** First POST → every event received (the receiver answers 200 after the commit). */
  receiveSeconds: number;
  /** First POST → no event pending any more. */
  drainSeconds: number;
  /** Last event received → no event pending any more. */
  afterReceiptSeconds: number;
  /** `GET /loads/<ref>` requests the daemon made (coalescing: ≈ one per load). */
  loadGets: number;
  /** 429 answers the simulator gave. */
  rateLimited: number;
  /** Loads of the burst whose latest CSV row does not carry the truth's updatedAt (must be 0). */
  notInSink: number;
  /** CPU seconds the daemon used while the burst was received (where the receipt time goes). */
  daemonCpuWhileReceiving: number;
  /** CPU seconds this process (the posters; the simulator answers the daemon's GETs meanwhile) used then. */
  benchCpuWhileReceiving: number;
  /** CPU seconds the daemon used from the last 200 to the drain. */
  daemonCpuAfterReceipt: number;
}

/**
 * Drain time of a webhook burst (issue 14 goal: 5,000 events touching 500 loads at 8 req/s in
 * ≤ 90 s): `freight-sync run` (child process, polling off, CSV sink, default mappings) against a
 * simulator limited to `rateLimit` req/s; the bench posts `events` signed load events — each of
 * `loads` loads named `events/loads` times, interleaved — as fast as the receiver takes them,
 * then waits until the inbox has nothing pending. Processed one GET per event, the drain is bound
 * by events ÷ rate; coalesced per load, by loads ÷ rate — plus the loads refreshed while the burst
 * was still arriving (a load that gets another event after its GET needs another GET).
 */
export async function benchWebhookBurst(options: { events?: number; loads?: number; rateLimit?: number } = {}): Promise<WebhookBurstResult> {
  const events = options.events ?? 5000;
  const loads = options.loads ?? 500;
  const rateLimit = options.rateLimit ?? 8;
  const sim = await startSimulator({ variant: 'main', seed: 12, loads: Math.max(loads, 1000), clientId: 'bench', clientSecret: 'bench-secret', rateLimit: { requestsPerSecond: rateLimit, burst: rateLimit } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-burst-'));
  let run: WebhookRun | undefined;
  try {
    const truth: Array<Record<string, unknown>> = [];
    for await (const load of sim.truth('loads')) {
      if (load['isDeleted'] !== true) truth.push(load);
      if (truth.length === loads) break;
    }
    run = await startWebhookRun(sim, dir, { requestsPerSecond: rateLimit, streams: ['loads'] });
    const { url, out, statePath } = run;
    const getsBefore = loadGets(sim.stats().byRoute);
    const limitedBefore = sim.stats().rateLimited;

    const started = Date.now();
    const cpuStart = { daemon: run.cpuSeconds(), bench: process.cpuUsage() };
    let next = 0;
    const post = async () => {
      for (let i = next++; i < events; i = next++) {
        const load = truth[i % truth.length]!;
        const body = JSON.stringify({ eventType: 'load#info_updated', reference_number: load['reference_number'], _id: load['_id'], changedValues: { officeNote: `burst ${i}` } });
        const signature = `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`;
        const status = await postOnce(agent, url, body, signature);
        if (status !== 200) throw new Error(`bench: delivery ${i} answered ${status}`);
      }
    };
    // node:http with keep-alive, not fetch: fetch cost this process ~1.6 ms of CPU per delivery, and
    // on a shared 2-core machine the posters, not the receiver, then set the pace of the burst.
    const agent = new http.Agent({ keepAlive: true, maxSockets: POSTERS });
    await Promise.all(Array.from({ length: POSTERS }, post)).finally(() => agent.destroy());
    const receiveSeconds = (Date.now() - started) / 1000;
    const benchCpu = process.cpuUsage(cpuStart.bench);
    const daemonCpuReceived = run.cpuSeconds();
    await until(() => inboxCount(statePath, "state = 'pending'") === 0, 1_800_000, 'the burst is drained');
    const drainSeconds = (Date.now() - started) / 1000;
    const daemonCpuDrained = run.cpuSeconds();

    const byKey = latestUpdated(out, 'loads');
    const notInSink = truth.filter((load) => byKey.get(String(load['reference_number'])) !== Date.parse(String(load['updatedAt']))).length;
    const stats = sim.stats();
    await run.stop();
    return { events, loads, rateLimit, receiveSeconds, drainSeconds, afterReceiptSeconds: drainSeconds - receiveSeconds, loadGets: loadGets(stats.byRoute) - getsBefore, rateLimited: stats.rateLimited - limitedBefore,
      notInSink,
      daemonCpuWhileReceiving: daemonCpuReceived - cpuStart.daemon,
      benchCpuWhileReceiving: (benchCpu.user + benchCpu.system) / 1e6,
      daemonCpuAfterReceipt: daemonCpuDrained - daemonCpuReceived,
    };
  } finally {
    run?.kill();
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const POSTERS = 16;

/** One signed delivery; resolves with the status once the answer was read. */
function postOnce(agent: http.Agent, url: string, body: string, signature: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'X-Hub-Signature': signature } }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
      response.once('error', reject);
    });
    request.once('error', reject);
    request.end(body);
  });
}

/** Answers to `GET /loads/<ref>` the simulator counted (every status but 429, counted apart). */
function loadGets(byRoute: Record<string, Record<string, number>>): number {
  let n = 0;
  for (const [route, statuses] of Object.entries(byRoute)) {
    if (/^GET \/loads\/[^/]+$/.test(route)) for (const [status, count] of Object.entries(statuses)) if (status !== '429') n += count;
  }
  return n;
}

/** The newest `_updated_at` (ms) per record key in the CSV drop. */
function latestUpdated(outDir: string, table: string): Map<string, number> {
  const latest = new Map<string, number>();
  for (const [key, rows] of rowsByKey(outDir, table)) latest.set(key, Math.max(...rows.map((r) => r.updated)));
  return latest;
}

interface WebhookRun {
  url: string;
  out: string;
  statePath: string;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
  /** CPU seconds (user + system) the daemon process used so far (Linux /proc; NaN elsewhere). */
  cpuSeconds(): number;
  kill(): void;
}

/**
 * `freight-sync run` as a child process receiving webhooks: polling off (a yearly cron, so every
 * row came through the webhook path), the CSV connector with its DEFAULT mappings (no `mappings`:
 * config/mappings/, as users run them). Resolves once the receiver answers.
 */
async function startWebhookRun(sim: SimulatorHandle, dir: string, options: { requestsPerSecond: number; streams: string[] }): Promise<WebhookRun> {
  const out = path.join(dir, 'out');
  const statePath = path.join(dir, 'state.sqlite');
  const port = await freePort();
  const webhookPath = '/webhooks/freight';
  const configFile = path.join(dir, 'bench.yaml');
  fs.writeFileSync(
    configFile,
    stringify({
      api: simulatorApiConfig(sim, { requestsPerSecond: options.requestsPerSecond, maxInFlight: 4 }),
      state: { path: statePath },
      log: { level: DAEMON_LOG_LEVEL ?? 'warn', pretty: false },
      http: { enabled: false },
      webhooks: { enabled: true, listen: `127.0.0.1:${port}`, path: webhookPath, secret: SECRET, catchUpInterval: 'PT0S' },
      sync: {
        defaults: { schedule: '0 0 1 1 *', initialFrom: sim.options.dataStart },
        streams: Object.fromEntries(options.streams.map((s) => [s, { enabled: true, sinks: ['out'] }])),
      },
      connectors: { out: { type: 'csv', options: { directory: out } } },
    }),
  );
  const child = spawn(process.execPath, [...DAEMON_NODE_ARGS, CLI, 'run', '--no-initial-sync', '-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-10_000);
    if (DAEMON_LOG_FILE) fs.appendFileSync(DAEMON_LOG_FILE, d);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}${webhookPath}`;
  const kill = () => void (child.exitCode === null && child.kill('SIGKILL'));
  try {
    await until(async () => {
      if (child.exitCode !== null) throw new Error(`freight-sync run exited ${child.exitCode}: ${stderr.slice(-2000)}`);
      return fetch(url, { method: 'OPTIONS' }).then(
        (r) => r.arrayBuffer().then(() => true),
        () => false,
      );
    }, 30_000, 'the webhook receiver listens');
  } catch (error) {
    kill();
    throw error;
  }
  return {
    url,
    out,
    statePath,
    kill,
    cpuSeconds: () => processCpuSeconds(child.pid),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function processCpuSeconds(pid: number | undefined): number {
  try {
    // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised name): utime, stime in clock ticks (100/s on Linux).
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Rows of the daemon's webhook inbox matching `where`; undefined while the table does not exist yet. */
function inboxCount(statePath: string, where: string): number | undefined {
  if (!fs.existsSync(statePath)) return undefined;
  const db = new Database(statePath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`select count(*) as n from webhook_inbox where ${where}`).get() as { n: number }).n;
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

/** Every version of every load in the CSV drop, with the mtime of the file holding it. */
function rowsByKey(outDir: string, table: string): Map<string, Array<{ updated: number; mtime: number }>> {
  const byKey = new Map<string, Array<{ updated: number; mtime: number }>>();
  if (!fs.existsSync(outDir)) return byKey;
  for (const name of fs.readdirSync(outDir)) {
    // Batch files `<UTC time>-<seq>-<table>.csv` (the layout before batches: `<table>__<batchId>.csv`).
    const ofTable = new RegExp(`^\\d{8}T\\d{6}Z-\\d{6,}-${table}\\.csv$`).test(name) || (name.startsWith(`${table}__`) && name.endsWith('.csv') && !name.endsWith('.errors.csv'));
    if (!ofTable) continue;
    const file = path.join(outDir, name);
    const mtime = fs.statSync(file).mtimeMs;
    const rows = parse(fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, ''), { columns: true, skip_empty_lines: true }) as Array<Record<string, string>>;
    for (const row of rows) {
      const key = row['record_key'];
      if (!key) continue;
      const list = byKey.get(key) ?? [];
      list.push({ updated: Date.parse(row['_updated_at'] ?? ''), mtime });
      byKey.set(key, list);
    }
  }
  return byKey;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`bench: not met within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// `node dist/bench/webhook-latency.js` runs the latency bench alone (`BENCH_WEBHOOK_EVENTS_PER_S`, default 100, for `BENCH_WEBHOOK_SECONDS`, default 30).
// `BENCH_WEBHOOK_BURST=5000` runs the burst drain instead (`BENCH_WEBHOOK_BURST_LOADS`, `BENCH_WEBHOOK_RATE`).
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const burst = process.env['BENCH_WEBHOOK_BURST'];
  (burst
    ? benchWebhookBurst({ events: Number(burst), loads: Number(process.env['BENCH_WEBHOOK_BURST_LOADS'] ?? 500), rateLimit: Number(process.env['BENCH_WEBHOOK_RATE'] ?? 8) })
    : benchWebhookLatency({ perSecond: Number(process.env['BENCH_WEBHOOK_EVENTS_PER_S'] ?? 100), seconds: Number(process.env['BENCH_WEBHOOK_SECONDS'] ?? 30) })
  ).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
