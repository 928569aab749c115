import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPass } from '../src/app/sync-pass.js';
import { startSimulatorProcess } from './simulator-process.js';
import { openLoadsBackfillApp } from './loads-backfill-app.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface SideBySideResult {
  loads: number;
  latencyMs: number;
  /** Mean of the two bare runs, before and after the engine's (the VM's speed drifts within minutes). */
  bareSeconds: number;
  bareRuns: readonly [number, number];
  bareRecordsPerSecond: number;
  /** One row per sink the engine delivered to: the null sink, then CSV with the default mapping. */
  engine: Array<{ sink: SideBySideSink; seconds: number; recordsPerSecond: number; ratio: number }>;
}

export type SideBySideSink = 'null' | 'csv';

const ENGINE_SINKS: readonly SideBySideSink[] = ['null', 'csv'];

/**
 * The engine against a bare fetch-and-parse loop over the same pages, in the same process, from
 * the same simulator (in its own process, like a remote API): what the engine's safety
 * (validation, hashing, dedup, checkpoints in SQLite, one page read ahead) costs compared with
 * the least a client could do.
 */
export async function benchSideBySide(loads: number, latencyMs = 0): Promise<SideBySideResult> {
  const sim = await startSimulatorProcess({ seed: 5, loads });
  if (latencyMs > 0) {
    // Every answer delayed, like a remote API's round trip.
    const admin = sim.baseUrl.replace(/\/v1$/, '/__admin/config');
    const answer = await fetch(admin, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pageDelayMs: latencyMs }) });
    if (!answer.ok) throw new Error(`simulator config: HTTP ${answer.status}`);
  }
  const dataStart = '2000-01-01T00:00:00.000Z';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-side-'));
  try {
    const to = new Date(Date.now() - 5000).toISOString();
    const before = await bareLoop(sim.baseUrl, { clientId: sim.clientId, clientSecret: sim.clientSecret }, dataStart, to);

    const engine: SideBySideResult['engine'] = [];
    for (const sink of ENGINE_SINKS) {
      // Each sink on a state of its own: a full backfill of the same pages, not an incremental pass.
      const runDir = path.join(dir, sink);
      fs.mkdirSync(runDir);
      const out = sink === 'null' ? { module: path.resolve(here, 'null-sink.js') } : { type: 'csv', options: { directory: path.join(runDir, 'out') } };
      const app = await openLoadsBackfillApp(sim, runDir, dataStart, out);
      const engineStart = process.hrtime.bigint();
      try {
        await runPass(app, { command: 'bench', backfill: { from: dataStart, to }, signal: new AbortController().signal });
      } finally {
        await app.close();
      }
      engine.push({ sink, seconds: Number(process.hrtime.bigint() - engineStart) / 1e9, recordsPerSecond: 0, ratio: 0 });
    }
    const after = await bareLoop(sim.baseUrl, { clientId: sim.clientId, clientSecret: sim.clientSecret }, dataStart, to);
    if (after.seen !== before.seen) throw new Error(`the bare loops read ${before.seen} and ${after.seen} loads`);
    const seen = before.seen;
    const bareSeconds = (before.seconds + after.seconds) / 2;
    for (const row of engine) {
      row.recordsPerSecond = seen / row.seconds;
      row.ratio = bareSeconds / row.seconds;
    }
    return { loads: seen, latencyMs, bareSeconds, bareRuns: [before.seconds, after.seconds], bareRecordsPerSecond: seen / bareSeconds, engine };
  } finally {
    await sim.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Token, then keyset pages with fetch + JSON.parse, nothing else: the least a client could do. */
async function bareLoop(baseUrl: string, credentials: { clientId: string; clientSecret: string }, dataStart: string, to: string): Promise<{ seconds: number; seen: number }> {
  const started = process.hrtime.bigint();
  const tokenAnswer = (await (
    await fetch(`${baseUrl}/retrieve-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) })
  ).json()) as { data: { access_token: string } };
  let from = dataStart;
  let seen = 0;
  let skip = 0;
  for (;;) {
    const query = new URLSearchParams({ updatedAtFrom: from, updatedAtTo: to, sortBy: JSON.stringify({ updatedAt: 1 }), skip: String(skip), limit: '50', isIncludeDeleted: 'true' });
    const response = await fetch(`${baseUrl}/loads?${query}`, { headers: { authorization: `Bearer ${tokenAnswer.data.access_token}` } });
    const page = JSON.parse(await response.text()) as { data: Array<{ updatedAt: string }> };
    seen += page.data.length;
    if (page.data.length < 50) break;
    const last = page.data[page.data.length - 1]!.updatedAt;
    skip = last === from ? skip + 50 : page.data.filter((l) => l.updatedAt === last).length;
    from = last;
  }
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, seen };
}
