import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { startBadResponseProxy, type SpoilRule } from '../helpers/bad-response-proxy.js';
import { collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';

/**
 * The bad-API-response corpus (test/fixtures/bad-input/api): each fixture spoils chosen answers
 * of the simulator through a loopback proxy. A sync of four streams must not crash, must report
 * exactly the expected status, rejected count and error per stream, quarantine bad elements in
 * the quarantine (kind api-schema), and lose nothing else: every stream not named as failing equals the truth,
 * and a spoiled stream misses at most the spoiled elements.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const corpus = path.resolve(here, '../fixtures/bad-input/api');

interface StreamExpectation {
  status: 'ok' | 'failed';
  rejected: number;
  /** Exact error text of the stream's summary (failed streams). */
  error?: string;
}
interface Fixture {
  description: string;
  rules: SpoilRule[];
  expected: {
    streams: Record<string, StreamExpectation>;
    /** Exact `problem` of the quarantined element. */
    rejectedProblem?: string;
    /** none: nothing missing; spoiled: only the spoiled elements; stream:X: X may be incomplete. */
    missing: string;
    /** Fields a delivered (spoiled) record must carry, per stream. */
    delivered?: Record<string, Record<string, unknown>>;
  };
}

const STREAMS: Record<string, { table: string; truth: 'loads' | 'customers' | 'bills' | 'supportMoves'; key: string }> = {
  loads: { table: 'loads', truth: 'loads', key: 'reference_number' },
  customers: { table: 'customers', truth: 'customers', key: '_id' },
  bills: { table: 'bills', truth: 'bills', key: 'billId' },
  supportMoves: { table: 'support_moves', truth: 'supportMoves', key: 'supportMoveNumber' },
};

const fixtures = fs
  .readdirSync(corpus)
  .filter((n) => n.endsWith('.json'))
  .sort()
  .map((n) => [n, JSON.parse(fs.readFileSync(path.join(corpus, n), 'utf8')) as Fixture] as const);

let sim: SimulatorHandle;
beforeAll(async () => {
  // No mutator: the truth is fixed, so anything missing is the spoil's doing.
  sim = await startSim({ variant: 'main', seed: 3, loads: 300, customers: 30, consignees: 10, bills: 120, supportMoves: 60 });
});
afterAll(async () => sim?.close());

function rejectedRows(stateFile: string): Array<{ stream: string; problem: string }> {
  const db = new Database(stateFile, { readonly: true });
  try {
    return db.prepare("select stream, reason as problem from quarantine where kind = 'api-schema'").all() as Array<{ stream: string; problem: string }>;
  } finally {
    db.close();
  }
}

describe('bad API responses: precise errors, quarantine, nothing else lost', () => {
  it('has at least ten fixtures, each with an expectation per stream it names', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
    for (const [name, f] of fixtures) {
      for (const [stream, e] of Object.entries(f.expected.streams)) {
        expect(STREAMS[stream], `${name}: ${stream}`).toBeDefined();
        if (e.status === 'failed') expect(e.error, `${name}: a failed stream needs its exact error`).toBeTruthy();
      }
    }
  });

  it.each(fixtures)('%s', async (_name, fixture) => {
    const proxy = await startBadResponseProxy(sim.baseUrl, fixture.rules, corpus);
    try {
      const dir = tempDir('bad-api');
      const config = pullConfig({
        sim,
        dir,
        streams: Object.keys(STREAMS),
        raw: {
          api: {
            variant: 'main',
            baseUrl: proxy.baseUrl,
            auth: { clientId: sim.options.clientId, clientSecret: sim.options.clientSecret },
            rateLimit: { requestsPerSecond: 2000, maxInFlight: 4 },
            retry: { maxAttempts: 4, baseDelay: 'PT0.02S', maxDelay: 'PT0.1S', maxElapsed: 'PT20S' },
            timeout: 'PT5S',
          },
        },
      });
      const summaries = await syncOnce(config, dir);
      expect(proxy.spoiled, 'the fixture spoiled nothing: its route or position is wrong').toBeGreaterThan(0);
      const byStream = new Map(summaries.map((s) => [s.stream, s]));
      for (const stream of Object.keys(STREAMS)) {
        const want = fixture.expected.streams[stream] ?? { status: 'ok', rejected: 0 };
        const got = byStream.get(stream)!;
        expect({ stream, status: got.status, rejected: got.rejected, error: want.error === undefined ? undefined : got.error }).toEqual({
          stream,
          status: want.status,
          rejected: want.rejected,
          error: want.error,
        });
      }

      const rejected = rejectedRows(path.join(dir, 'state.sqlite'));
      const expectedRejected = Object.values(fixture.expected.streams).reduce((n, e) => n + e.rejected, 0);
      expect(rejected).toHaveLength(expectedRejected);
      if (fixture.expected.rejectedProblem !== undefined) expect(rejected.map((r) => r.problem)).toEqual([fixture.expected.rejectedProblem]);

      for (const [stream, s] of Object.entries(STREAMS)) {
        const truth = await collectTruth(sim, s.truth);
        const latest = latestByKey(readCsvRows(path.join(dir, 'out'), s.table));
        const cmp = compareWithTruth(truth, latest, (r) => String(r[s.key]));
        if (fixture.expected.missing === `stream:${stream}`) continue;
        const spoiledKeys =
          fixture.expected.missing === 'spoiled' && fixture.expected.streams[stream]
            ? proxy.elements.map((e) => e.original[s.key]).filter((k) => k !== undefined).map(String)
            : [];
        expect({ stream, missing: cmp.missing.sort(), stale: cmp.stale, wrongOp: cmp.wrongOp }).toEqual({ stream, missing: spoiledKeys.sort(), stale: [], wrongOp: [] });
        for (const [field, value] of Object.entries(fixture.expected.delivered?.[stream] ?? {})) {
          const key = proxy.elements[0]!.original[s.key];
          const raw = JSON.parse(latest.get(String(key))!['_raw']!) as Record<string, unknown>;
          expect(raw[field]).toEqual(value);
        }
      }
    } finally {
      await proxy.close();
    }
  });
});
