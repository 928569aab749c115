// Issue 14 (memory) probe: one `freight-sync backfill` as benchBackfill (bench/pull-backfill.ts) runs it — simulator
// seed 99 in this process, the built CLI as a child, CSV sink, default or slim mapping — with node flags and
// environment for the child, and /proc sampling. Not part of npm run bench: the figures of bench/results-scaling.md,
// section "issue 14 memory, branch perf-rss", came from it. Build first (npm run build).
// Usage: node bench/issue14-rss/probe.mjs <checkout with dist/> <loads> <default|slim> [label]; env: EXTRA_NODE_ARGS (e.g.
// "--import bench/issue14-rss/sampler.mjs"), CHILD_ENV (k=v,k=v), WRAP (e.g. "heaptrack -o file"), SAMPLES_OUT, RESULTS_OUT.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
const [wt, loadsS, mapping = 'default', label = ''] = process.argv.slice(2);
const loads = Number(loadsS);
const { startSimulator } = await import(path.join(wt, 'dist/src/simulator/index.js'));
const { simulatorApiConfig } = await import(path.join(wt, 'dist/bench/simulator-api-config.js'));
const { SLIM_LOADS_MAPPING } = await import(path.join(wt, 'dist/bench/loads-backfill-app.js'));
const { stringify } = await import(path.join(wt, 'node_modules/yaml/dist/index.js'));
const CLI = path.join(wt, 'dist/src/cli/bin.js');
const sim = await startSimulator({ variant: 'main', seed: 99, loads, rateLimit: null });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fs-rss-'));
const connectors = { out: { type: 'csv', options: { directory: path.join(dir, 'out') }, ...(mapping === 'default' ? {} : { mappings: { loads: SLIM_LOADS_MAPPING } }) } };
const configFile = path.join(dir, 'bench.yaml');
fs.writeFileSync(configFile, stringify({
  api: simulatorApiConfig(sim, { requestsPerSecond: 100_000, maxInFlight: 1 }),
  state: { path: path.join(dir, 'state.sqlite') },
  log: { level: 'warn', pretty: false },
  sync: { defaults: { initialFrom: sim.options.dataStart, safetyLag: 'PT2S' }, streams: { loads: { enabled: true, sinks: ['out'] } } },
  connectors,
}));
const to = new Date(sim.now().getTime() - 5000).toISOString();
const extra = (process.env.EXTRA_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const childEnv = { ...process.env, FREIGHT_SYNC_REPORT_RSS: '1' };
for (const kv of (process.env.CHILD_ENV ?? '').split(',').filter(Boolean)) { const i = kv.indexOf('='); childEnv[kv.slice(0, i)] = kv.slice(i + 1); }
delete childEnv.EXTRA_NODE_ARGS; delete childEnv.CHILD_ENV;
const load0 = os.loadavg();
const started = process.hrtime.bigint();
const wrap = (process.env.WRAP ?? '').split(/\s+/).filter(Boolean);
const child = spawn(wrap[0] ?? process.execPath, [...wrap.slice(1), ...(wrap.length ? [process.execPath] : []), ...extra, CLI, 'backfill', '--from', sim.options.dataStart, '--to', to, '-c', configFile], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
let stdout = '', stderr = '';
child.stdout.on('data', (d) => (stdout += d));
child.stderr.on('data', (d) => (stderr += d));
const samples = [];
const timer = setInterval(() => {
  try {
    const st = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const g = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)?.[1] ?? NaN) / 1024;
    samples.push({ t: Number(process.hrtime.bigint() - started) / 1e9, rss: g('VmRSS'), anon: g('RssAnon'), file: g('RssFile'), hwm: g('VmHWM') });
  } catch {}
}, 500);
const code = await new Promise((r) => child.on('exit', (c) => r(c)));
clearInterval(timer);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const load1 = os.loadavg();
await sim.close();
fs.rmSync(dir, { recursive: true, force: true });
if (code !== 0) { console.error(stderr.slice(-3000)); process.exit(1); }
const rss = Number(/peak-rss-kib=(\d+)/.exec(stderr)?.[1]) / 1024;
const cpu = /child-cpu-ms=(\d+)/.exec(stderr)?.[1];
const delivered = Number(/loads\s+ok\s+(\d+)/.exec(stdout)?.[1] ?? NaN);
const maxAnon = Math.max(...samples.map((s) => s.anon)), maxFile = Math.max(...samples.map((s) => s.file));
const line = { label, loads, mapping, seconds: +seconds.toFixed(1), peakRssMiB: +rss.toFixed(1), maxAnonSampled: +maxAnon.toFixed(1), maxFileSampled: +maxFile.toFixed(1), cpuMs: cpu ? Number(cpu) : undefined, delivered, load: `${load0.map((x) => x.toFixed(2)).join(' ')} -> ${load1.map((x) => x.toFixed(2)).join(' ')}`, extra: extra.join(' '), env: process.env.CHILD_ENV ?? '' };
console.log(JSON.stringify(line));
if (process.env.RESULTS_OUT) fs.appendFileSync(process.env.RESULTS_OUT, JSON.stringify(line) + '\n');
if (process.env.SAMPLES_OUT) fs.writeFileSync(process.env.SAMPLES_OUT, samples.map((s) => JSON.stringify(s)).join('\n'));
if (process.env.PRINT_STDERR) console.error(stderr.slice(-5000));
