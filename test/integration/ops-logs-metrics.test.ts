import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPass } from '../../src/app/sync-pass.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { freePort, opsUrl, startDaemon } from '../helpers/daemon-harness.js';
import { repeatedKeys } from '../helpers/json-keys.js';
import { parsePrometheusText, type Family } from '../helpers/prometheus-text.js';
import { pullConfig, startSim, tempDir, withPullApp } from '../helpers/pull-harness.js';

const REPORT_FIELDS = ['app', 'command', 'delivered', 'durationMs', 'error', 'level', 'msg', 'outcome', 'pages', 'rejected', 'requests', 'stream', 'time', 'unchanged'];
const packageVersion = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sample = (family: Family | undefined, labels: Record<string, string>) =>
  family?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('logs and metrics of a daemon run against the simulator', () => {
  it('no line repeats a key; one "run finished" report per run; runs, last success and build info in /metrics', async () => {
    const sim = await startSim({ loads: 120, seed: 13, accessTokenTtlMs: 1_500 });
    const dir = tempDir('ops-logs');
    const config = pullConfig({ sim, dir, streams: ['loads', 'customers'], raw: { http: { listen: `127.0.0.1:${await freePort()}` } } });
    // A temp file left by a crash two hours ago: the CSV connector logs its removal through the
    // logger it re-binds `connector` on (create-connectors bound it already).
    const stale = path.join(dir, 'out', '.tmp-crashed.csv');
    mkdirSync(path.dirname(stale), { recursive: true });
    writeFileSync(stale, 'x');
    utimesSync(stale, new Date(Date.now() - 7_200_000), new Date(Date.now() - 7_200_000));
    const { logger, lines } = capturingLogger('debug');
    const daemon = await startDaemon(config, dir, { runOnStart: true, logger });
    let metricsText: string;
    try {
      await waitFor(() => (lines.filter((l) => l.includes('"msg":"run finished"')).length >= 2 ? true : undefined), 'both streams\' report lines');
      metricsText = await (await fetch(opsUrl(config, '/metrics'))).text();
    } finally {
      await daemon.stop();
      await sim.close();
    }

    // Real traffic through every component: the API client and its auth child, the connectors
    // (bound by the app and again by the CSV connector), the stream runner, the ops server.
    const text = lines.join('\n');
    expect(text).toContain('"component":"connectors"');
    expect(text).toContain('"connector":"out"');
    const withRepeats = lines.map((line) => ({ line, repeated: repeatedKeys(line) })).filter((l) => l.repeated.length > 0);
    expect(withRepeats).toEqual([]);

    const reports = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'run finished');
    expect(reports.map((r) => r.stream).sort()).toEqual(['customers', 'loads']);
    for (const report of reports) {
      expect(Object.keys(report).sort()).toEqual(REPORT_FIELDS);
      expect(report).toMatchObject({ level: 30, command: 'run', outcome: 'ok', rejected: 0, error: null });
      expect(report.requests).toBeGreaterThan(0);
    }
    expect(reports.find((r) => r.stream === 'loads')!.delivered).toBe(120);

    const families = parsePrometheusText(metricsText);
    const runs = families.get('freight_sync_runs_total');
    expect(runs?.type).toBe('counter');
    expect(sample(runs, { stream: 'loads', outcome: 'ok' })).toBe(1);
    expect(sample(runs, { stream: 'customers', outcome: 'ok' })).toBe(1);
    const lastSuccess = families.get('freight_sync_last_success_timestamp_seconds');
    const loadsAt = sample(lastSuccess, { stream: 'loads' });
    expect(loadsAt).toBeGreaterThan(Date.parse('2026-01-01') / 1000);
    expect(loadsAt).toBeLessThanOrEqual(Date.now() / 1000);
    const build = families.get('freight_sync_build_info');
    expect(build?.samples).toEqual([{ name: 'freight_sync_build_info', labels: { version: packageVersion, node: process.versions.node }, value: 1 }]);
  });

  it('expected failures (connection refused, credentials rejected) are named once, without a stack, in the run report', async () => {
    const sim = await startSim({ loads: 5, seed: 2 });
    const dir = tempDir('ops-logs-fail');
    const down = await freePort(); // nothing listens there: ECONNREFUSED
    const refused = pullConfig({ sim, dir: tempDir('ops-logs-refused'), streams: ['loads'] });
    refused.api.baseUrl = `http://127.0.0.1:${down}/v1`;
    const rejected = pullConfig({ sim, dir: tempDir('ops-logs-rejected'), streams: ['loads'] });
    rejected.api.auth = { ...rejected.api.auth, clientSecret: 'wrong-secret-123456' } as typeof rejected.api.auth;
    const cases = [
      { name: 'refused', config: refused, cause: /ECONNREFUSED/ },
      { name: 'rejected', config: rejected, cause: /HTTP 40[13]|credentials|rejected/i },
    ];
    try {
      for (const c of cases) {
        const { config } = c;
        config.api.retry.maxAttempts = 2;
        const { logger, lines } = capturingLogger('debug');
        const metrics = await withPullApp(
          config,
          dir,
          async (app) => {
            const summaries = await runPass(app, { command: 'sync', signal: new AbortController().signal });
            expect(summaries.map((s) => s.status)).toEqual(['failed']);
            return parsePrometheusText((await app.metrics.render()).body);
          },
          logger,
        );
        await new Promise((r) => setImmediate(r));
        expect(lines.filter((l) => l.includes('stack')), c.name).toEqual([]);
        const errors = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => (l.level as number) >= 50);
        // One error line for the failed run — its report — naming the cause.
        expect(errors.map((e) => e.msg), c.name).toEqual(['run finished']);
        expect(errors[0]).toMatchObject({ stream: 'loads', outcome: 'failed', command: 'sync' });
        expect(String(errors[0]!.error)).toMatch(c.cause);
        expect(sample(metrics.get('freight_sync_runs_total'), { stream: 'loads', outcome: 'failed' }), c.name).toBe(1);
        expect(sample(metrics.get('freight_sync_last_success_timestamp_seconds'), { stream: 'loads' }), c.name).toBeUndefined();
      }
    } finally {
      await sim.close();
    }
  });
});
