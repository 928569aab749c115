// First: the CLI's heap settings apply before the product's modules load (cli-memory-policy.ts).
import './cli-memory-policy.js';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderTable } from '../src/cli/table.js';
import { benchSideBySide } from './bare-loop.js';
import { benchCliMemory } from './cli-memory.js';
import { benchOutbound } from './outbound.js';
import { benchSqlUpsert } from './sql-upsert.js';
import { describeMachine } from './machine.js';
import { benchBackfill, type BackfillBenchResult } from './pull-backfill.js';
import { benchWebhookEventsSteady, type WebhookEventsPass } from './webhook-events-steady.js';
import { benchStreamPasses, type StreamPassRow } from './stream-passes.js';
import { benchWebhookBurst, benchWebhookLatency, type WebhookLatencyResult } from './webhook-latency.js';
import { benchCpuPerPage, describeCpuCase } from './cpu-per-page.js';
import { benchFailover } from './failover.js';
import { benchIdleAccounts } from './idle-accounts.js';

/**
 * `npm run bench`: every benchmark of the project in one table, printed and saved to
 * bench/results.md with the machine's description. `--quick` runs smaller sizes (minutes
 * instead of tens of minutes). Speed and memory goals live here, not in timed tests.
 * `--only=a,b` runs those sections; `--results=bench/results-x.md` saves to another file (so a
 * partial run does not replace the full table).
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const wanted = (name: string) => !only || only.includes(name);
const resultsArg = process.argv.find((a) => a.startsWith('--results='))?.slice('--results='.length);

interface Section {
  title: string;
  table: string;
  notes?: string;
}
const sections: Section[] = [];
const log = (text: string) => process.stderr.write(`${text}\n`);
const fixed = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

async function main(): Promise<void> {
  const startedAt = new Date();
  const machine = describeMachine();
  log(`machine: ${machine}`);

  if (wanted('scaling')) {
    const sizes = quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
    const rows: BackfillBenchResult[] = [];
    // What users run first (the default loads mapping, `_raw` included), then the slim mapping.
    for (const mapping of ['default', 'slim'] as const) {
      for (const loads of sizes) {
        log(`backfill of ${loads} loads, no rate limit, CSV sink, ${mapping} mapping …`);
        rows.push(await benchBackfill({ loads, sink: 'csv', mapping }));
      }
    }
    sections.push({
      title: 'Pull: backfill of N loads, no rate limit, CSV sink (child process; goals: requests/record ÷ minimum ≤ 1.05, peak RSS ≤ 150 MB and flat in N with the default mapping)',
      table: renderTable(
        ['mapping', 'loads', 'seconds', 'records/s', 'requests', 'req/record ÷ min', 'peak RSS MiB', 'delivered'],
        rows.map((r) => [r.mapping, r.loads, fixed(r.seconds, 1), Math.round(r.recordsPerSecond), r.requests, fixed(r.requestsPerRecordRatio, 3), fixed(r.peakRssMiB, 0), r.delivered]),
      ),
      notes:
        'Peak RSS is the `freight-sync backfill` child\'s own (its memory map\'s high-water mark, VmHWM, at exit: src/cli/peak-rss.ts); the simulator runs in the bench process. ' +
        "Of it, ~48 MiB are file-backed pages (node binary, libraries) and the V8 heap's live part is ~30 MiB; the young generation is capped at two 4 MiB semi-spaces (src/cli/young-generation.ts); the rest is old-generation garbage awaiting collection and malloc'd memory (SQLite page cache, per-thread arenas).",
    });
  }

  if (wanted('cpu')) {
    const loads = quick ? 10_000 : 20_000;
    log(`CPU per 50-record page, backfill of ${loads} loads (default mapping and slim mapping into CSV, null sink) …`);
    // The default case twice: first in a fresh process (what the goal is read on), then again in
    // the same process with its code compiled and its caches warm, as in the rest of a long backfill.
    const rows = await benchCpuPerPage(loads, ['csv-default', 'csv-default', 'csv-slim', 'null']);
    sections.push({
      title: 'Pull: CPU per 50-record page of this process, simulator in its own process (goal: ≤ 9 ms with the default loads mapping into CSV)',
      table: renderTable(
        ['sink and mapping', 'records', 'pages', 'CPU ms', 'CPU ms/page', 'user / system ms/page', 'page faults/page', 'ctx switches/page', 'wall s'],
        rows.map((r, i) => [
          i === 1 ? `${describeCpuCase(r.case)}, warm` : describeCpuCase(r.case),
          r.records,
          r.pages,
          Math.round(r.cpuMs),
          fixed(r.cpuMsPerPage),
          `${fixed(r.userMsPerPage)} / ${fixed(r.systemMsPerPage)}`,
          Math.round(r.minorFaultsPerPage),
          Math.round(r.voluntarySwitchesPerPage),
          fixed(r.wallSeconds, 1),
        ]),
      ),
      notes:
        'process.cpuUsage() (user + system) around `runPass` of a loads backfill; includes GC, HTTP parsing, SQLite state and the sink. The goal is read on the first row (a fresh process, ' +
        'its code still being compiled); "warm" is the same backfill again in that process, into a new folder and state, as the pages after the first thousands of a long backfill cost. Page faults and voluntary context switches ' +
        '(process.resourceUsage) do not depend on the machine load the way CPU time does on a shared VM. Alone: `npm run build && node dist/bench/run.js --only=cpu`.',
    });
  }

  if (wanted('ratelimit')) {
    const loads = quick ? 10_000 : 30_000;
    log(`backfill of ${loads} loads at a 10 req/s server limit …`);
    const atLimit = await benchBackfill({ loads, sink: 'null', rateLimit: 10, clientRate: 10 });
    log(`… and with the client configured at 20 req/s (adaptive) against the same limit …`);
    const over = await benchBackfill({ loads: Math.round(loads / 2), sink: 'null', rateLimit: 10, clientRate: 20 });
    sections.push({
      title: 'Pull at a 10 req/s server limit (goals: achieved ÷ limit ≥ 0.95, 429 share < 1%)',
      table: renderTable(
        ['client rate setting', 'loads', 'seconds', 'requests', 'achieved req/s ÷ limit', '429s', '429 share'],
        [
          ['10 req/s (= limit)', atLimit.loads, fixed(atLimit.seconds, 1), atLimit.requests, fixed(atLimit.achievedRequestsPerSecond / 10, 3), atLimit.rateLimited, `${fixed(atLimit.share429 * 100)}%`],
          ['20 req/s, adaptive', over.loads, fixed(over.seconds, 1), over.requests, fixed(over.achievedRequestsPerSecond / 10, 3), over.rateLimited, `${fixed(over.share429 * 100)}%`],
        ],
      ),
    });
  }

  if (wanted('sidebyside')) {
    const loads = quick ? 20_000 : 100_000;
    log(`engine vs bare fetch-and-parse loop over ${loads} loads (loopback, then 20 ms per answer) …`);
    const results = [await benchSideBySide(loads, 0), await benchSideBySide(Math.round(loads / 5), 20)];
    sections.push({
      title: 'Engine vs a bare fetch-and-parse loop in the same process, same pages; simulator in its own process (goal on loopback: ratio ≥ 0.9 null sink, ≥ 0.7 CSV sink with the default loads mapping)',
      table: renderTable(
        ['added latency per answer', 'loads', 'bare s (before / after)', 'bare records/s', 'engine sink', 'engine s', 'engine records/s', 'ratio'],
        results.flatMap((r) =>
          r.engine.map((e) => [
            `${r.latencyMs} ms`,
            r.loads,
            `${fixed(r.bareSeconds, 1)} (${fixed(r.bareRuns[0], 1)} / ${fixed(r.bareRuns[1], 1)})`,
            Math.round(r.bareRecordsPerSecond),
            e.sink === 'null' ? 'null' : 'CSV, default mapping',
            fixed(e.seconds, 1),
            Math.round(e.recordsPerSecond),
            fixed(e.ratio, 3),
          ]),
        ),
      ),
      notes:
        'The engine validates every record, hashes it, checks and stores the hash in SQLite, and commits a checkpoint per page; the bare loop does none of that. ' +
        'The CSV row also maps every load with the default mapping (loads and its stops child table) and stages and publishes the files durably. ' +
        'On loopback the simulator answers a page in a few ms, so the engine\'s CPU per page (section "CPU per 50-record page") shows almost fully; with a round trip like a remote API\'s, the engine reads the next page while it delivers the current one. ' +
        'The bare loop runs before and after the engine (into each sink, each from an empty state), and the ratio is taken on the mean of the two bare runs: on these shared VMs the speed drifts within minutes, and a single bare run before the engine moved the ratio by ±0.15 between runs.',
    });
  }

  if (wanted('sql')) {
    const records = quick ? 5_000 : 20_000;
    log(`SQL sink upserts of ${records} mapped loads per dialect …`);
    const results = await benchSqlUpsert({ records });
    sections.push({
      title: 'Sinks: SQL upsert throughput (default loads mapping with its stops child table, batches of 50, one transaction each; goal PostgreSQL ratio ≥ 0.9)',
      table: renderTable(
        ['sink', 'records', 'seconds', 'records/s', 'bare upsert records/s', 'sink ÷ bare', 'of which mapping s', 'sink without mapping ÷ bare'],
        results.map((r) => [
          r.sink,
          r.records,
          r.skipped ? 'skipped' : fixed(r.seconds, 1),
          r.skipped ? r.skipped : Math.round(r.recordsPerSecond),
          r.bareRecordsPerSecond ?? 'n/a',
          r.ratio === undefined ? 'n/a' : fixed(r.ratio, 3),
          r.mappingSeconds === undefined ? 'n/a' : fixed(r.mappingSeconds, 1),
          r.ratioWithoutMapping === undefined ? 'n/a' : fixed(r.ratioWithoutMapping, 3),
        ]),
      ),
      notes:
        'Bare: the same rows, mapped and encoded before the clock starts, written by the driver alone, batch by batch alternating with the sink (BEGIN; one multi-row INSERT … ON CONFLICT DO UPDATE / ON DUPLICATE KEY UPDATE per table; COMMIT) into empty tables of the same shape, in the same run. ' +
        'The sink also maps each record and replaces children only for records whose version won. ' +
        '"of which mapping": the sink\'s time inside the stream mapper (records → rows), which the bare loop is spared (it is handed mapped rows); "sink without mapping ÷ bare" compares the two on that footing.',
    });
  }

  if (wanted('outbound')) {
    const creates = quick ? 150 : 300;
    log(`outbound: ${creates} creates at a 10 req/s limit …`);
    const r = await benchOutbound({ creates, limit: 10 });
    sections.push({
      title: 'Outbound: load creates at a 10 req/s server limit (goal: creates/s ÷ limit ≥ 0.9)',
      table: renderTable(['creates', 'seconds', 'creates/s', 'limit', 'ratio'], [[r.creates, fixed(r.seconds, 1), fixed(r.createsPerSecond), r.limit, fixed(r.ratio, 3)]]),
    });
  }

  if (wanted('webhooks')) {
    const seconds = quick ? 10 : 30;
    const rows: WebhookLatencyResult[] = [];
    for (const perSecond of [10, 50, 100]) {
      log(`webhook latency: ${perSecond} events/s for ${seconds} s into \`freight-sync run\` (default mappings, CSV sink) …`);
      rows.push(await benchWebhookLatency({ perSecond, seconds }));
    }
    const ms = (n: number) => (Number.isFinite(n) ? String(Math.round(n)) : 'n/a');
    sections.push({
      title: 'Webhooks: change → CSV row and receipt → CSV row latency, `freight-sync run` with default mappings, polling off (goals: receipt → sink p95 ≤ 300 ms at 100 events/s, 0 missing)',
      table: renderTable(
        ['events/s asked', 'events/s', 'load events', 'change→sink p50/p95/max ms', 'receipt→sink p50/p95/max ms', 'receipt→200 p50/p95 ms', 'missing', 'daemon CPU s / 1000 events'],
        rows.map((r) => [
          r.targetPerSecond,
          fixed(r.eventsPerSecond, 1),
          r.loadEvents,
          `${ms(r.changeToSink.p50Ms)} / ${ms(r.changeToSink.p95Ms)} / ${ms(r.changeToSink.maxMs)}`,
          `${ms(r.receiptToSink.p50Ms)} / ${ms(r.receiptToSink.p95Ms)} / ${ms(r.receiptToSink.maxMs)}`,
          `${ms(r.receiptToAnswer.p50Ms)} / ${ms(r.receiptToAnswer.p95Ms)}`,
          r.missing,
          fixed(r.daemonCpuPer1000Events, 2),
        ]),
      ),
      notes:
        'Per load event, from the simulator-only event timing (`eventTimings()`: the API event carries no change time): change = the load\'s new updatedAt; receipt = the simulator sent the delivery the daemon answered 200; sink = mtime of the first CSV file holding the change (same host clock). ' +
        'The bench takes mutator steps to keep the events emitted (all families) at the asked pace; the simulator delivers them one at a time; the daemon refreshes each load with GET /loads/<ref> before writing it. Alone: `npm run build && BENCH_WEBHOOK_EVENTS_PER_S=100 node dist/bench/webhook-latency.js`.',
    });
  }

  if (wanted('burst')) {
    const events = quick ? 1000 : 5000;
    const loads = events / 10;
    log(`webhook burst: ${events} events touching ${loads} loads, simulator limited to 8 req/s …`);
    const r = await benchWebhookBurst({ events, loads, rateLimit: 8 });
    sections.push({
      title: `Webhooks: drain time of a burst of ${events} events touching ${loads} loads, 8 req/s server limit (goal for 5,000/500: ≤ 90 s, one GET per load, 0 not in sink)`,
      table: renderTable(
        ['events', 'loads', 'limit req/s', 'received s', 'drained s', 'drained after receipt s', 'GET /loads/<ref>', 'GETs ÷ loads', '429s', 'not in sink', 'daemon CPU s receiving', 'bench CPU s receiving'],
        [[r.events, r.loads, r.rateLimit, fixed(r.receiveSeconds, 1), fixed(r.drainSeconds, 1), fixed(r.afterReceiptSeconds, 1), r.loadGets, fixed(r.loadGets / r.loads), r.rateLimited, r.notInSink, fixed(r.daemonCpuWhileReceiving, 2), fixed(r.benchCpuWhileReceiving, 2)]],
      ),
      notes:
        'The bench posts signed load events (each load named events ÷ loads times, interleaved) to `freight-sync run` (polling off, CSV sink, default mappings) as fast as the receiver takes them; ' +
        "drained = first POST → nothing pending in the inbox. GETs above the number of loads are loads refreshed while the burst was still arriving and named again after their GET. Before coalescing (one GET per event, merged only inside a 100-event batch) the same burst took ~10 min.",
    });
  }

  if (wanted('memory')) {
    log('peak RSS of short CLI commands (3 runs each) …');
    const rows = benchCliMemory(3);
    sections.push({
      title: 'Memory: peak RSS of short CLI commands, 3 runs each (goal: --help ≤ 60 MB)',
      table: renderTable(['command', 'peak RSS MiB (min–max)', 'exit'], rows.map((r) => [r.command, `${fixed(r.minMiB, 1)}–${fixed(r.maxMiB, 1)}`, r.exitCode ?? 'signal'])),
      notes: 'Each command imports its implementation when it runs (src/cli/actions/); `--help` loads commander and the command definitions only.',
    });
  }

  if (wanted('steady')) {
    const loads = quick ? 2_000 : 5_000;
    const rows: WebhookEventsPass[] = [];
    for (const variant of ['main', 'brokerage'] as const) {
      log(`webhookEvents steady state, ${variant}, ${loads} loads …`);
      rows.push(...(await benchWebhookEventsSteady({ variant, loads, perTick: [0, 1, 2, 5] })));
    }
    sections.push({
      title: 'Steady state: webhookEvents requests per incremental pass ÷ minimum (ceil(new events / 50) + 1), default window settings, mutator between passes (goal ≤ 1.05; at most minimum + 1)',
      table: renderTable(['variant', 'new events', 'requests', 'minimum', 'ratio'], rows.map((r) => [r.variant, r.newEvents, r.requests, r.minimum, fixed(r.requests / r.minimum)])),
      notes: 'Brokerage lists a window in one answer without paging, so its pass is one request whatever changed.',
    });
  }

  if (wanted('passes')) {
    const sizes = quick ? [2_000] : [5_000, 20_000];
    const rows: StreamPassRow[] = [];
    for (const variant of ['main', 'brokerage'] as const) {
      for (const loads of sizes) {
        // Mutator steps per five-minute interval in proportion to the account (100 at 5,000 loads).
        const stepsPerInterval = Math.round(loads / 50);
        log(`incremental pass cost per stream, ${variant}, ${loads} loads, ${stepsPerInterval} mutator steps over 5 min of server time …`);
        rows.push(...(await benchStreamPasses({ variant, loads, stepsPerInterval })));
      }
    }
    const goalMet = (r: StreamPassRow) => (r.pass === 'changes' ? r.requests / r.minimum <= 1.05 : r.requests <= r.minimum + 1);
    const steady = (r: StreamPassRow) => r.stream !== 'invoices';
    sections.push({
      title: 'Steady state: requests per incremental pass per stream ÷ minimum (ceil(changes / 50) + 1), default stream settings and mappings, mutator on over 5-minute intervals (goal ≤ 1.05 each, invoices informational; nothing changed: ≤ minimum + 1)',
      table: renderTable(
        ['variant', 'loads', 'pass', 'stream', 'changes', 'lookback re-read', 'requests', 'minimum', 'ratio', 'goal met', 'floor with lookback', 'ratio to floor'],
        rows.map((r) => [
          r.variant,
          r.loads,
          r.pass,
          r.stream,
          r.changes,
          r.reread,
          r.requests,
          r.minimum,
          fixed(r.requests / r.minimum),
          steady(r) ? (goalMet(r) ? 'yes' : 'NO') : 'n/a (invoices)',
          r.floor,
          fixed(r.requests / r.floor),
        ]),
      ),
      notes:
        'Requests counted by the simulator around each stream\'s run of one `runPass`; changes from its truth (records new or different between snapshots before and after the interval). ' +
        'The measured pass follows an interval of changes and its pass, as in a running daemon; then three passes 5 minutes apart with nothing changing. ' +
        '"lookback re-read": records delivered by an earlier pass that the stream\'s lookback (PT10M; none in the append-only logs webhookEvents, loadAudits, customerAudits) reads again, being timed within it before the checkpoint; "floor with lookback" = ceil((changes + re-read) / 50) + 1, the least the setting allows. ' +
        'Reference lists read whole every run (customerRates paged without a count) have the pages of the whole list as their minimum (floor(entries / 50) + 1), and that list size in `changes`. ' +
        'Product defaults: lookback PT10M, safety lag PT30S, pages of 50, schedule every 5 min; CSV sink with the default mappings; documentFiles left out (its requests are a second read of the loads feed). ' +
        'Alone: `npm run build && node dist/bench/run.js --only=passes` (results in bench/results-passes.md).',
    });
  }

  if (wanted('passes-lag')) {
    // The lookback's cover for late writes, given by the safety lag instead: one read per record.
    // What `lateWriteCover: auto` gives the loads stream when webhooks are on (default lookback
    // PT10M and safety lag PT30S: ranges end 10 min 30 s behind the server clock).
    const window = { settings: { lateWriteCover: 'lag' }, safetyLagMs: 630_000 };
    const rows: StreamPassRow[] = [];
    for (const loads of quick ? [2_000] : [5_000, 20_000]) {
      log(`incremental pass cost per stream, main, ${loads} loads, lateWriteCover: lag …`);
      rows.push(...(await benchStreamPasses({ variant: 'main', loads, stepsPerInterval: Math.round(loads / 50), window })));
    }
    const feeds = rows.filter((r) => r.stream !== 'invoices' && !['chargeCodes', 'loadDocumentTypes', 'customerDiscounts', 'customerRates', 'customerDynamicRates'].includes(r.stream));
    sections.push({
      title: `Steady state, main, the lookback's cover from the safety lag instead (\`lateWriteCover: lag\`; the default for loads with webhooks on): requests per pass ÷ minimum (ceil(records in the pass's range / 50) + 1) (goal ≤ 1.05 each; nothing in range: ≤ minimum + 1)`,
      table: renderTable(
        ['loads', 'pass', 'stream', 'records in range', 'requests', 'minimum', 'ratio', 'goal met'],
        feeds.map((r) => [r.loads, r.pass, r.stream, r.changes, r.requests, r.minimum, fixed(r.requests / r.minimum), r.requests / r.minimum <= 1.05 || (r.changes === 0 && r.requests <= r.minimum + 1) ? 'yes' : 'NO']),
      ),
      notes:
        'Every stream with `lateWriteCover: lag` and the default lookback PT10M and safety lag PT30S: ranges end 10 min 30 s behind the server clock and start at the checkpoint. `lateWriteCover: auto` (the default) does this for the loads stream when webhooks are on, and keeps the lookback (table above) for the streams polling alone serves. A write that becomes visible up to 10 min 30 s late is still read — it lies after the checkpoint instead of inside a lookback (test/integration/pull-lookback-late-writes.test.ts) — and each record is read once, but polling delivers a change ~10 minutes later: for accounts whose webhooks bring changes in seconds (polling then is the safety net). ' +
        'Same passes as the table above (an interval of changes, then passes 5 minutes apart with nothing changing), after more warm-up intervals so the measured range holds an interval of changes; "records in range": records whose updatedAt (createdAt for the logs) lies after the previous checkpoint and up to this one, from the simulator\'s truth. Reference lists left out (read whole either way). ' +
        'Alone: `npm run build && node dist/bench/run.js --only=passes-lag`.',
    });
  }

  if (wanted('failover')) {
    const kills = quick ? 3 : 5;
    const leaseTtlMs = 4000;
    const claimIntervalMs = 1000;
    log(`failover: 3 replicas on PostgreSQL state, ${kills} SIGKILLs of the lease holder, lease TTL ${leaseTtlMs} ms, claim every ${claimIntervalMs} ms …`);
    const r = await benchFailover({ replicas: 3, kills, leaseTtlMs, claimIntervalMs });
    const stat = (values: Array<number | undefined>) => {
      const v = values.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
      return v.length === 0 ? ['n/a', 'n/a', 'n/a'] : [v[0]!, v[Math.floor((v.length - 1) / 2)]!, v[v.length - 1]!];
    };
    const goal = leaseTtlMs + claimIntervalMs;
    const claims = r.failovers.map((f) => f.claimMs);
    sections.push({
      title: `Failover: SIGKILL of the lease holder → account worked elsewhere, 3 replicas, lease TTL ${leaseTtlMs} ms, claim interval ${claimIntervalMs} ms (goal: claimed ≤ TTL + claim interval = ${goal} ms)`,
      table:
        renderTable(['measure', 'kills', 'min ms', 'median ms', 'max ms', 'within goal'], [
          ['claimed by another replica', claims.length, ...stat(claims), `${claims.filter((c) => c !== undefined && c <= goal).length}/${claims.length}`],
          ['first checkpoint committed', r.failovers.length, ...stat(r.failovers.map((f) => f.commitMs)), '—'],
        ]) +
        '\n' +
        renderTable(['kill', 'old epoch', 'new epoch', 'claimed ms', 'first checkpoint ms'], r.failovers.map((f, i) => [i + 1, f.oldEpoch, f.newEpoch ?? '—', f.claimMs ?? '—', f.commitMs ?? '—'])),
      notes:
        'Times on the database clock: the signal is timed with clock_timestamp() just before SIGKILL; the claim is the first poll (every 50 ms) of account_leases showing a greater epoch held by another process; ' +
        'the first checkpoint is the earliest commit to `checkpoints` after the kill, recorded by a statement trigger (test/chaos/cluster-audit.ts). The scheduler runs loads every 2 s, so the commit adds up to one tick after the claim. ' +
        'The killed replica is restarted after each measurement (as a standby). Alone: `npm run build && node dist/bench/run.js --only=failover`.',
    });
  }

  if (wanted('idle')) {
    const sizes = quick ? [10] : [10, 50, 100];
    const windowSeconds = quick ? 60 : 120;
    const rows = [];
    for (const accounts of sizes) {
      log(`idle accounts: one replica, ${accounts} accounts on PostgreSQL state, loads polled every minute, ${windowSeconds} s window …`);
      rows.push(await benchIdleAccounts({ accounts, windowSeconds }));
    }
    sections.push({
      title: 'Idle accounts on one replica: PostgreSQL state, each account its loads stream polled every minute into its own CSV drop (default mapping), nothing changing on the API',
      table: renderTable(
        ['accounts', 'all leases held s', 'window s', 'CPU % of a core', 'CPU % per account', 'RSS MiB', 'state connections', 'requests / account / min'],
        rows.map((r) => [r.accounts, fixed(r.startSeconds, 1), fixed(r.windowSeconds, 0), fixed(r.cpuPercent, 1), fixed(r.cpuPercent / r.accounts, 2), fixed(r.rssMiB, 0), r.connections, fixed(r.requestsPerAccountMinute, 2)]),
      ),
      notes:
        'One `freight-sync run` child process serving every account (accounts key; each account its own API (a simulator of its own, 40 loads) and its own schema); measured after every lease is held and the first passes settled. ' +
        'CPU from /proc/<pid>/stat over the window; state connections = PostgreSQL backends with the replica\'s PGAPPNAME (one pool shared by the accounts, state.poolSize 10). Alone: `npm run build && node dist/bench/run.js --only=idle`.',
    });
  }

  const body = sections.map((s) => `### ${s.title}\n\n\`\`\`\n${s.table}\`\`\`\n${s.notes ? `\n${s.notes}\n` : ''}`).join('\n');
  const report = `# Benchmark results\n\n${startedAt.toISOString()} — ${machine}${quick ? ' — quick sizes' : ''}\n\nCommand: \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`\n\n${body}`;
  process.stdout.write(`\n${report}\n`);
  // A selection (`--only=cpu`) is saved beside the full table, never over it; `--results=` names the file.
  const resultsFile = resultsArg ? path.resolve(resultsArg) : path.resolve(here, `../../bench/${only ? `results-${only.join('-')}` : 'results'}.md`);
  fs.writeFileSync(resultsFile, report);
  log(`saved ${path.relative(process.cwd(), resultsFile)}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
