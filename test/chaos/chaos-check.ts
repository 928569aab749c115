import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { compareWithTruth } from '../../src/app/csv-drop-check.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import type { ChaosSink } from './chaos-sinks.js';
import type { ChaosStream } from './chaos-streams.js';
import { STAGING_TABLE, type SentCreate } from './outbound-feed.js';

export interface SinkResult {
  sink: string;
  stream: string;
  truth: number;
  missing: number;
  stale: number;
  duplicates: number;
  wrongTombstone: number;
  /** Keys the sink has and the server never had. */
  phantom: number;
  examples: string[];
}

async function collect(sim: SimulatorHandle, resource: ChaosStream['truth']): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const record of sim.truth(resource)) out.push(record);
  return out;
}

/**
 * Every sink × stream against the simulator's truth (read once per stream). The server's record
 * of every key that differs goes to `differencesFile` (NDJSON), since the simulator is gone after.
 */
export async function checkSinks(sim: SimulatorHandle, sinks: readonly ChaosSink[], streams: readonly ChaosStream[], differencesFile: string): Promise<SinkResult[]> {
  const results: SinkResult[] = [];
  for (const stream of streams) {
    const truth = await collect(sim, stream.truth);
    const byKey = new Map(truth.map((r) => [stream.key(r), r]));
    for (const sink of sinks) {
      const table = await sink.read(stream.table);
      const cmp = compareWithTruth(truth, table.latest, stream.key, stream.isDeleted);
      for (const key of [...cmp.missing, ...cmp.stale, ...cmp.wrongOp, ...cmp.phantom]) {
        fs.appendFileSync(differencesFile, `${JSON.stringify({ sink: sink.name, stream: stream.stream, key, inSink: table.latest.get(key) ?? null, truth: byKey.get(key) ?? null })}\n`);
      }
      results.push({
        sink: sink.name,
        stream: stream.stream,
        truth: truth.length,
        missing: cmp.missing.length,
        stale: cmp.stale.length,
        duplicates: table.duplicates,
        wrongTombstone: cmp.wrongOp.length,
        phantom: cmp.phantom.length,
        examples: [...cmp.missing.map((k) => `missing ${k}`), ...cmp.stale.map((k) => `stale ${k}`), ...cmp.wrongOp.map((k) => `tombstone ${k}`), ...cmp.phantom.map((k) => `phantom ${k}`)].slice(0, 5),
      });
    }
  }
  return results;
}

export interface OutboundResult {
  via: 'inbox' | 'staging';
  expected: number;
  /** ERP keys that exist on the server (once or more). */
  created: number;
  /** Loads beyond the first per ERP key. */
  duplicates: number;
  /** Requests whose write-back is absent, not `done`, or names another load's reference number. */
  writeBackWrong: number;
  examples: string[];
}

function resultRows(inboxDir: string): Map<string, Map<string, Record<string, string>>> {
  // <file>.result.csv lands beside the processed (or failed) request file.
  const byFile = new Map<string, Map<string, Record<string, string>>>();
  for (const sub of ['processed', 'failed']) {
    const dir = path.join(inboxDir, sub);
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir)) {
      if (!name.endsWith('.result.csv')) continue;
      const rows = parse(fs.readFileSync(path.join(dir, name), 'utf8'), { columns: true, skip_empty_lines: true }) as Record<string, string>[];
      byFile.set(name.slice(0, -'.result.csv'.length), new Map(rows.map((r) => [String(r['ref']), r])));
    }
  }
  return byFile;
}

function stagingRows(file: string | undefined): Map<string, Record<string, unknown>> {
  if (!file || !fs.existsSync(file)) return new Map();
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare(`select erp_key, status, reference_number, error from ${STAGING_TABLE}`).all() as Record<string, unknown>[];
    return new Map(rows.map((r) => [String(r['erp_key']), r]));
  } catch {
    return new Map();
  } finally {
    db.close();
  }
}

/** Each ERP key created exactly once (deleted later by the mutator still counts), write-backs right. */
export async function checkOutbound(sim: SimulatorHandle, sent: readonly SentCreate[], inboxDir: string, sqliteFile: string | undefined): Promise<OutboundResult[]> {
  const wanted = new Set(sent.map((s) => s.key));
  const loadsByKey = new Map<string, string[]>();
  for await (const load of sim.truth('loads')) {
    const key = load['secondaryReferenceNo'];
    if (typeof key === 'string' && wanted.has(key)) loadsByKey.set(key, [...(loadsByKey.get(key) ?? []), String(load['reference_number'])]);
  }
  const results = resultRows(inboxDir);
  const staging = stagingRows(sqliteFile);
  const out: OutboundResult[] = [];
  for (const via of ['inbox', 'staging'] as const) {
    const mine = sent.filter((s) => s.via === via);
    const r: OutboundResult = { via, expected: mine.length, created: 0, duplicates: 0, writeBackWrong: 0, examples: [] };
    for (const s of mine) {
      const refs = loadsByKey.get(s.key) ?? [];
      if (refs.length > 0) r.created += 1;
      else r.examples.push(`not created ${s.key}`);
      if (refs.length > 1) {
        r.duplicates += refs.length - 1;
        r.examples.push(`${refs.length}× ${s.key}`);
      }
      const back = via === 'inbox' ? results.get(s.file!)?.get(String(s.line)) : staging.get(s.key);
      const status = back?.['status'];
      const ref = back?.['reference_number'];
      if (status !== 'done' || typeof ref !== 'string' || refs.length !== 1 || ref !== refs[0]) {
        r.writeBackWrong += 1;
        r.examples.push(`write-back ${s.key}: ${back ? `${String(status)} ${String(ref)} ${String(back['error'] ?? '')}` : 'none'}`);
      }
    }
    r.examples = r.examples.slice(0, 5);
    out.push(r);
  }
  return out;
}
