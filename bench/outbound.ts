import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { composeOutbound, openApp } from '../src/app/compose.js';
import { parseConfig } from '../src/config/parse-config.js';
import { MemorySource } from '../src/outbound/memory-source.js';
import { runPush } from '../src/outbound/run-push.js';
import { startSimulator } from '../src/simulator/index.js';
import { silentLogger } from '../src/util/logger.js';

export interface OutboundBenchResult {
  creates: number;
  seconds: number;
  createsPerSecond: number;
  /** The simulator's request limit (requests per second). */
  limit: number;
  /** createsPerSecond ÷ limit; goal ≥ 0.9 (the dispatcher keeps the shared budget busy). */
  ratio: number;
}

/**
 * Outbound throughput against a rate-limited simulator: `creates` load creates pushed through the
 * outbox with the client budget set to the server's limit. Every create is one request, so the
 * ratio says how much of the allowed rate the dispatcher turns into creates (token fetch,
 * scheduling gaps and 429 back-offs are the losses).
 */
export async function benchOutbound(options: { creates?: number; limit?: number } = {}): Promise<OutboundBenchResult> {
  const creates = options.creates ?? 300;
  const limit = options.limit ?? 10;
  const sim = await startSimulator({ clientId: 'bench', clientSecret: 'bench-secret', loads: 100, customers: 5, consignees: 5, rateLimit: { requestsPerSecond: limit, burst: Math.max(2, Math.ceil(limit / 5)) } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-outbound-'));
  try {
    let caller = '';
    for await (const customer of sim.truth('customers')) {
      caller = String(customer['_id']);
      break;
    }
    const config = parseConfig(
      {
        api: {
          variant: 'main',
          baseUrl: sim.baseUrl,
          auth: { clientId: 'bench', clientSecret: 'bench-secret' },
          rateLimit: { requestsPerSecond: limit, maxInFlight: 8, adaptive: true },
        },
        state: { path: path.join(dir, 'state.sqlite') },
        log: { level: 'silent' },
        outbound: { enabled: true, sources: [], concurrency: 8 },
      },
      { source: 'bench config', baseDir: dir },
    );
    const source = new MemorySource();
    source.add(
      'bench',
      Array.from({ length: creates }, (_, i) => ({ erp_key: `BENCH-${i + 1}`, kind: 'create', type_of_load: 'IMPORT', preSetOrderStatus: '', caller, shipper: caller })),
    );
    const app = await openApp({ config, filePath: path.join(dir, 'bench.yaml'), baseDir: dir }, { logger: silentLogger(), withConnectors: false });
    try {
      // The token is fetched before the clock starts: the bench measures the dispatcher.
      await app.client.tokens.accessToken();
      const started = Date.now();
      const abortSignal = new AbortController().signal;
      const summary = await runPush(composeOutbound(app, { abortSignal, extraSources: [{ name: 'bench', source }] }), {
        stopSignal: new AbortController().signal,
        abortSignal,
        maxWaitMs: 60_000,
        settleMs: 0,
      });
      const seconds = (Date.now() - started) / 1000;
      if (summary.done !== creates) throw new Error(`bench: ${summary.done} of ${creates} creates done (${summary.dead} dead)`);
      const createsPerSecond = creates / seconds;
      return { creates, seconds: Math.round(seconds * 100) / 100, createsPerSecond: Math.round(createsPerSecond * 100) / 100, limit, ratio: Math.round((createsPerSecond / limit) * 1000) / 1000 };
    } finally {
      await app.close();
    }
  } finally {
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// `node dist/bench/outbound.js` runs it alone.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const creates = Number(process.env['BENCH_CREATES'] ?? 300);
  const limit = Number(process.env['BENCH_LIMIT'] ?? 10);
  benchOutbound({ creates, limit }).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
