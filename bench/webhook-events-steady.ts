import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { openApp } from '../src/app/compose.js';
import { runPass } from '../src/app/sync-pass.js';
import { parseConfig } from '../src/config/parse-config.js';
import { startSimulator, type SimulatorHandle } from '../src/simulator/index.js';
import { silentLogger } from '../src/util/logger.js';
import { simulatorApiConfig } from './simulator-api-config.js';

/**
 * Requests per incremental pass of the `webhookEvents` stream against its minimum
 * (ceil(new events / 50) + 1), with the product's default window settings (lookback PT10M,
 * minWindow PT1M, maxWindow P7D) and the mutator changing loads between passes. One app stays
 * open for all passes, as in the daemon (the server clock is read once, not every pass).
 */
export interface WebhookEventsPass {
  variant: 'main' | 'brokerage';
  newEvents: number;
  requests: number;
  minimum: number;
}

const PAGE = 50;

async function eventIds(sim: SimulatorHandle): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const event of sim.truth('webhookEvents')) ids.add(String(event._id));
  return ids;
}

export async function benchWebhookEventsSteady(options: { variant: 'main' | 'brokerage'; loads: number; perTick: number[] }): Promise<WebhookEventsPass[]> {
  const sim = await startSimulator({ variant: options.variant, loads: options.loads, seed: 14, clientId: 'bench', clientSecret: 'bench-secret' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-webhook-events-'));
  try {
    const config = parseConfig(
      {
        api: simulatorApiConfig(sim, { requestsPerSecond: 2000, maxInFlight: 4 }),
        state: { path: path.join(dir, 'state.sqlite') },
        log: { level: 'silent' },
        sync: {
          defaults: { initialFrom: sim.options.dataStart, safetyLag: 'PT2S' },
          streams: { webhookEvents: { enabled: true, sinks: ['out'] } },
        },
        connectors: { out: { type: 'csv', options: { directory: path.join(dir, 'out') } } },
      },
      { source: 'bench config', baseDir: dir },
    );
    const app = await openApp({ config, filePath: path.join(dir, 'bench.yaml'), baseDir: dir }, { logger: silentLogger(), withConnectors: true });
    const pass = async () => {
      // The simulator's clock jumps between passes; a daemon's moves with real time. One uncounted
      // call lets the client see the server clock, as it would have in the daemon.
      await app.client.call({ method: 'GET', route: '/load-document-type', schema: z.unknown() });
      const [summary] = await runPass(app, { command: 'bench', signal: new AbortController().signal });
      if (summary?.status !== 'ok') throw new Error(`webhookEvents pass failed: ${summary?.error ?? 'no summary'}`);
      return summary;
    };
    const results: WebhookEventsPass[] = [];
    try {
      // A busy start: the timer mutator writes while the first pass reads; then a settling pass.
      sim.configure({ mutator: { enabled: true, intervalMs: 20, perTick: 10 } });
      await pass();
      sim.configure({ mutator: { enabled: false, intervalMs: 20, perTick: 10 } });
      sim.advance(3_500);
      await pass();
      let known = await eventIds(sim);
      for (const perTick of options.perTick) {
        // A five-minute schedule's worth of server time, changes spread over it.
        for (let tick = 0; tick < 100; tick += 1) {
          if (perTick > 0) await sim.mutate(perTick);
          sim.advance(3_000);
        }
        sim.advance(3_500);
        const now = await eventIds(sim);
        const newEvents = [...now].filter((id) => !known.has(id)).length;
        known = now;
        const summary = await pass();
        results.push({ variant: options.variant, newEvents, requests: summary.requests, minimum: Math.ceil(newEvents / PAGE) + 1 });
      }
    } finally {
      await app.close();
    }
    return results;
  } finally {
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
