import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.js';
import { Prng } from '../../src/simulator/prng.js';
import { freePort } from '../helpers/daemon-harness.js';
import { checkOutbound, checkSinks, type OutboundResult, type SinkResult } from './chaos-check.js';
import { writeChaosConfig } from './chaos-config.js';
import type { ChaosOptions } from './chaos-options.js';
import { prepareSinks, type SkippedSink } from './chaos-sinks.js';
import { chaosStreams } from './chaos-streams.js';
import { renderChaosReport } from './chaos-table.js';
import { exitWithin, startCli, type CliChild } from './daemon-process.js';
import { OutboundFeed } from './outbound-feed.js';
import { scanForSecrets, tokensInState, type SecretHit } from './secret-scan.js';

export interface ChaosReport {
  options: ChaosOptions;
  durationMs: number;
  kills: number;
  sinks: SinkResult[];
  skipped: SkippedSink[];
  outbound: OutboundResult[];
  secrets: SecretHit[];
  /** Anything else that went wrong: a daemon that died by itself, a final pass that failed. */
  problems: string[];
  simulator: ReturnType<SimulatorHandle['stats']>;
  ok: boolean;
  table: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const tail = (text: string) => text.split('\n').slice(-15).join('\n');

/**
 * One chaos scenario: the daemon (`freight-sync run`, a child process) against the simulator with
 * the mutator, faults, 429s, short tokens and clock skew on, SIGKILLed at seeded random points and
 * restarted while outbound creates arrive; then a final drain, one `sync`, and every sink compared
 * with the server's truth. Returns the report; `ok` is false on any difference.
 */
export async function runChaos(options: ChaosOptions, print: (line: string) => void): Promise<ChaosReport> {
  const started = Date.now();
  const rng = new Prng(options.seed);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `freight-sync-chaos-${options.label}-`));
  const logFile = path.join(dir, 'daemon-output.log');
  print(`chaos ${options.label}: seed ${options.seed} (replay with CHAOS_SEED=${options.seed}), ${options.kills} kills, ${options.loads} loads, work dir ${dir}`);
  const clientSecret = `chaos-secret-${randomBytes(12).toString('hex')}`;
  const sim = await startSimulator(chaosSimulatorOptions(options, clientSecret));
  const sinkSet = await prepareSinks(dir, options.label.replace(/\W/g, '_'));
  const problems: string[] = [];
  const tokens = new Set<string>();
  const stateFile = path.join(dir, 'state.sqlite');
  let kills = 0;
  try {
    const streams = chaosStreams(options.variant);
    const hasInbox = fs.existsSync(path.join(REPO, 'connectors', 'inbox', 'index.ts'));
    const inboxDir = path.join(dir, 'inbox');
    const stagingConnector = sinkSet.sqliteFile ? 'erp_sqlite' : undefined;
    const configFile = writeChaosConfig({
      options,
      sim,
      dir,
      sinks: sinkSet.sinks,
      streams,
      ...(hasInbox ? { inboxDir } : {}),
      ...(stagingConnector ? { stagingConnector } : {}),
      opsPort: await freePort(),
    });
    const sftpPassword = (await import('../helpers/sshd.js')).SFTP_TEST_PASSWORD;
    const env = { CHAOS_CLIENT_SECRET: clientSecret, CHAOS_SFTP_PASSWORD: sftpPassword };
    const parties = await pickParties(sim);
    const feed = new OutboundFeed({
      inboxDir,
      ...(sinkSet.sqliteFile ? { sqliteFile: sinkSet.sqliteFile } : {}),
      seed: options.seed,
      variant: options.variant,
      parties,
      inbox: hasInbox ? options.inboxCreates : 0,
      staging: options.stagingCreates,
    });
    const daemonArgs = ['run', '-c', configFile, '--log-level', options.logLevel];
    const perKillInbox = Math.ceil(options.inboxCreates / options.kills);
    const perKillStaging = Math.ceil(options.stagingCreates / options.kills);

    for (let i = 0; i < options.kills; i++) {
      const daemon = startCli(daemonArgs, { env, logFile, cwd: dir });
      feed.dropInboxFile(perKillInbox);
      feed.queueStaging(perKillStaging);
      const [min, max] = options.killAfterMs;
      // Start-up kills hit migrations, connector init and token recovery; the others hit passes,
      // batches, checkpoint commits and outbound sends at whatever point they are.
      const duringStartup = rng.next() < 0.25;
      if (!duringStartup) await waitForOutput(daemon, 'daemon running', 30_000, () => feed.flushStaging());
      const wait = duringStartup ? min + Math.floor(rng.next() * ((max - min) / 2)) : min + Math.floor(rng.next() * (max - min));
      const diedEarly = await waitOrExit(daemon, wait, () => feed.flushStaging());
      if (diedEarly) {
        problems.push(`daemon exited by itself before kill ${i + 1} (code ${diedEarly.code}, signal ${diedEarly.signal}):\n${tail(daemon.output())}`);
      } else {
        daemon.child.kill('SIGKILL');
        await daemon.exited;
        kills += 1;
      }
      for (const t of tokensInState(stateFile)) tokens.add(t);
      print(`  kill ${kills}/${options.kills}: ${wait} ms after ${duringStartup ? 'spawn' : '"daemon running"'}`);
    }

    // Final phase: no more changes on the server; everything left is sent; the daemon drains.
    sim.configure({ mutator: { enabled: false, intervalMs: 250, perTick: 3 } });
    const final = startCli(daemonArgs, { env, logFile, cwd: dir });
    feed.flushAll();
    const drained = await waitUntil(() => {
      feed.flushStaging();
      return feed.pendingStaging === 0 && outboundSettled(inboxDir, hasInbox, sinkSet.sqliteFile);
    }, final, 120_000);
    if (!drained) problems.push(`outbound did not drain within 120 s:\n${tail(final.output())}`);
    // The daemon's own final pass: every stream completes a run that started after the last
    // change (mutator stopped, outbound drained) fell behind the safety lag (2 s) and the Date
    // header's 1 s resolution. Only then the graceful stop.
    const settledAt = new Date(Date.now() + 4_000).toISOString();
    const passed = await waitUntil(() => streamsPassedSince(stateFile, streams.map((s) => s.stream), settledAt), final, 180_000);
    if (!passed) problems.push(`the daemon did not complete a pass of every stream after ${settledAt}:\n${tail(final.output())}`);
    final.child.kill('SIGTERM');
    const stop = await exitWithin(final, 15_000);
    if (stop.timedOut || stop.code !== 0) problems.push(`SIGTERM: daemon ${stop.timedOut ? 'did not stop within 15 s' : `exited with ${stop.code ?? stop.signal}`}:\n${tail(final.output())}`);
    for (const t of tokensInState(stateFile)) tokens.add(t);

    // And one `sync` as an operator would run it: it must succeed and may only confirm.
    const sync = startCli(['sync', '-c', configFile, '--log-level', options.logLevel], { env, logFile, cwd: dir });
    const syncExit = await exitWithin(sync, 180_000);
    if (syncExit.timedOut || syncExit.code !== 0) problems.push(`final sync: ${syncExit.timedOut ? 'timed out' : `exit ${syncExit.code}`}:\n${tail(sync.output())}`);
    for (const t of tokensInState(stateFile)) tokens.add(t);

    const sinks = await checkSinks(sim, sinkSet.sinks, streams, path.join(dir, 'differences.ndjson'));
    const outbound = await checkOutbound(sim, feed.sent, inboxDir, sinkSet.sqliteFile);
    const secrets = scanForSecrets(logFile, new Map([['api clientSecret', clientSecret], ['sftp password', sftpPassword]]), tokens);
    if (process.env.CI === 'true') for (const s of sinkSet.skipped) problems.push(`sink ${s.name} skipped under CI=true: ${s.reason}`);
    const durationMs = Date.now() - started;
    const ok =
      problems.length === 0 &&
      secrets.length === 0 &&
      sinks.every((r) => r.missing + r.stale + r.duplicates + r.wrongTombstone + r.phantom === 0) &&
      outbound.every((r) => r.created === r.expected && r.duplicates === 0 && r.writeBackWrong === 0);
    const report: Omit<ChaosReport, 'table'> = { options, durationMs, kills, sinks, skipped: sinkSet.skipped, outbound, secrets, problems, simulator: sim.stats(), ok };
    const table = renderChaosReport(report);
    print(table);
    if (ok) fs.rmSync(dir, { recursive: true, force: true });
    else print(`work dir kept for inspection: ${dir} (all daemon output in ${logFile})`);
    return { ...report, table };
  } finally {
    await sinkSet.close();
    await sim.close();
  }
}

/** The simulator of a chaos run: mutator (with late writes), faults, 429s, short tokens, ambiguous creates, clock skew. */
export function chaosSimulatorOptions(options: ChaosOptions, clientSecret: string): Parameters<typeof startSimulator>[0] {
  return {
    variant: options.variant,
    seed: options.seed % 1_000_000,
    loads: options.loads,
    customers: 60,
    consignees: 40,
    bills: 300,
    supportMoves: 200,
    clientId: 'chaos-client',
    clientSecret,
    accessTokenTtlMs: options.accessTokenTtlMs,
    rateLimit: { requestsPerSecond: options.serverRps, burst: Math.max(2, Math.round(options.serverRps / 4)) },
    faults: { rate: options.faultRate, kinds: ['500', '502', '503', 'html', 'drop', 'truncated'], slowMs: 100 },
    ambiguousCreateRate: options.ambiguousCreateRate,
    clockOffsetMs: options.clockOffsetMs,
    // A tenth of the load edits become visible up to 30 s late (updatedAt behind what a pass may
    // already have read): the lookback (PT1M in chaos-config.ts) must catch every one.
    mutator: { enabled: true, intervalMs: 250, perTick: 3, lateWrites: { share: 0.1, maxLateMs: 30_000 } },
  };
}

/** A live customer and consignee to name in every create (by API id). */
export async function pickParties(sim: SimulatorHandle): Promise<{ caller: string; shipper: string; consignee: string }> {
  const first = async (resource: 'customers' | 'consignees') => {
    for await (const r of sim.truth(resource)) if (r['isDeleted'] !== true && typeof r['_id'] === 'string') return r['_id'];
    throw new Error(`the simulator has no ${resource}`);
  };
  const customer = await first('customers');
  return { caller: customer, shipper: customer, consignee: await first('consignees') };
}

/** Waits `ms`, calling `tick` now and then; returns the exit if the process ended on its own. */
async function waitOrExit(run: CliChild, ms: number, tick: () => void) {
  const until = Date.now() + ms;
  let exit: Awaited<CliChild['exited']> | undefined;
  void run.exited.then((e) => (exit = e));
  while (Date.now() < until && !exit) {
    tick();
    await sleep(Math.min(200, Math.max(1, until - Date.now())));
  }
  return exit;
}

/** Waits until the process printed `text` (or exited, or `ms` passed). */
async function waitForOutput(run: CliChild, text: string, ms: number, tick: () => void): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until && run.child.exitCode === null && !run.output().includes(text)) {
    tick();
    await sleep(50);
  }
}

async function waitUntil(done: () => boolean, run: CliChild, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  let exited = false;
  void run.exited.then(() => (exited = true));
  while (Date.now() < until && !exited) {
    if (done()) return true;
    await sleep(500);
  }
  return done();
}

/** Every inbox file moved out of the inbox and processing folders, every staging row final. */
export function outboundSettled(inboxDir: string, hasInbox: boolean, sqliteFile: string | undefined): boolean {
  if (hasInbox) {
    const pending = (sub: string) => {
      const d = path.join(inboxDir, sub);
      return fs.existsSync(d) ? fs.readdirSync(d).filter((n) => n.endsWith('.csv')).length : 0;
    };
    if (pending('') + pending('processing') > 0) return false;
  }
  return stagingSettled(sqliteFile);
}

/** Whether every stream has an `ok` run that started after `since` (runs table of the state database). */
function streamsPassedSince(stateFile: string, streams: readonly string[], since: string): boolean {
  if (!fs.existsSync(stateFile)) return false;
  const db = new Database(stateFile, { readonly: true });
  try {
    db.pragma('busy_timeout = 2000');
    const rows = db.prepare("select distinct stream from runs where status = 'ok' and started_at > ?").all(since) as Array<{ stream: string }>;
    const done = new Set(rows.map((r) => r.stream));
    return streams.every((s) => done.has(s));
  } catch {
    return false;
  } finally {
    db.close();
  }
}

function stagingSettled(file: string | undefined): boolean {
  if (!file || !fs.existsSync(file)) return true;
  const db = new Database(file, { readonly: true });
  try {
    const row = db.prepare("select count(*) as n from freight_outbound_requests where status not in ('done', 'failed')").get() as { n: number } | undefined;
    return (row?.n ?? 1) === 0;
  } catch {
    return false;
  } finally {
    db.close();
  }
}
