import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemorySource } from '../../src/outbound/memory-source.js';
import { OutboxStore } from '../../src/state/stores/outbox-store.js';
import { UnitStore } from '../../src/state/stores/unit-store.js';
import { resultOf, WriteBack } from '../../src/outbound/write-back.js';
import type { CommandSource, InboundResult } from '../../src/contracts/index.js';
import type { StateTables } from '../../src/state/tables.js';
import { silentLogger } from '../../src/util/logger.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { createCommand, enqueue, updateCommand } from '../helpers/outbox-rows.js';
import { freshStateDatabase } from '../helpers/state-db.js';
import { createStores } from '../../src/state/stores/index.js';

/**
 * Write-back (design §3): results go back to where the requests came from once EVERY request of
 * the unit is final — done with the load's reference number, failed with the precise error.
 * Real SQLite outbox and unit tables; the source is the in-memory CommandSource.
 */
let db: Kysely<StateTables>;
let outbox: OutboxStore;
let units: UnitStore;
const signal = new AbortController().signal;

beforeEach(async () => {
  ({ db } = await freshStateDatabase());
  outbox = new OutboxStore(db);
  units = new UnitStore(db);
});

afterEach(async () => {
  await db.destroy();
});

/** A unit `u1` of source `mem` with: r1 → create A, r2 → update B, r3 → rejected at intake. */
async function unitWithThreeRequests(): Promise<{ a: number; b: number }> {
  await units.insert('mem', 'u1', 'memory:u1', 3);
  const a = await enqueue(outbox, createCommand('A'), { source: 'mem', unit: 'u1', ref: 'r1' });
  const b = await enqueue(outbox, updateCommand('B', { referenceNumber: 'L-B' }, { notes: 'x' }), { source: 'mem', unit: 'u1', ref: 'r2' });
  await units.addEntry('mem', 'u1', { ref: 'r1', seq: 1, outboxId: a, error: null, note: null });
  await units.addEntry('mem', 'u1', { ref: 'r2', seq: 2, outboxId: b, error: null, note: null });
  await units.addEntry('mem', 'u1', { ref: 'r3', seq: 3, outboxId: null, error: 'type_of_load: must be one of IMPORT, EXPORT, ROAD, BILL_ONLY', note: null });
  return { a, b };
}

function writeBack(sources: Record<string, CommandSource>, logger = silentLogger()): WriteBack {
  return new WriteBack(createStores(db), new Map(Object.entries(sources)), logger, signal);
}

describe('WriteBack', () => {
  it('writes nothing while any request of the unit is open, then every result once', async () => {
    const { a, b } = await unitWithThreeRequests();
    const source = new MemorySource();
    const wb = writeBack({ mem: source });

    await outbox.markDone(a, { referenceNumber: 'L-A', loadId: 'id-A' });
    await wb.forCommands([a]);
    expect(source.writeBacks).toBe(0);
    expect((await units.find('mem', 'u1'))?.state).toBe('open');

    await outbox.markDead(b, 'the API rejected it (HTTP 400): notes must be a string');
    await wb.forCommands([b]);
    expect(source.writeBacks).toBe(1);
    const results = source.results.get('u1')!;
    expect(results.map((r) => ({ ref: r.ref, status: r.status, referenceNumber: r.referenceNumber, error: r.error, outboxId: r.outboxId }))).toEqual([
      { ref: 'r1', status: 'done', referenceNumber: 'L-A', error: null, outboxId: a },
      { ref: 'r2', status: 'failed', referenceNumber: null, error: 'the API rejected it (HTTP 400): notes must be a string', outboxId: b },
      { ref: 'r3', status: 'failed', referenceNumber: null, error: 'type_of_load: must be one of IMPORT, EXPORT, ROAD, BILL_ONLY', outboxId: null },
    ]);
    expect(results[0]!.loadId).toBe('id-A');
    expect(results.every((r) => typeof r.finishedAt === 'string' && r.finishedAt !== '')).toBe(true);
    expect((await units.find('mem', 'u1'))?.state).toBe('written');
    expect(wb.stats.units).toBe(1);

    // A written unit is never written again.
    await wb.forCommands([a, b]);
    await wb.sweep();
    expect(source.writeBacks).toBe(1);
  });

  it('a failing write-back leaves the unit open; the next sweep writes it', async () => {
    const { a, b } = await unitWithThreeRequests();
    await outbox.markDone(a, { referenceNumber: 'L-A', loadId: null });
    await outbox.markDone(b, { referenceNumber: 'L-B', loadId: null });
    const source = new MemorySource();
    let fail = true;
    const flaky: CommandSource = {
      take: () => source.take(),
      accepted: (u) => source.accepted(u),
      writeBack: async (unitId: string, results: readonly InboundResult[]) => {
        if (fail) throw new Error('EACCES: permission denied, open out/u1.result.csv');
        return source.writeBack(unitId, results);
      },
    };
    const { logger, text } = capturingLogger('info');
    const wb = writeBack({ mem: flaky }, logger);
    await wb.forCommands([a, b]);
    expect(wb.stats).toEqual({ units: 0, failedCalls: 1 });
    expect((await units.find('mem', 'u1'))?.state).toBe('open');
    expect(text()).toContain('permission denied');

    fail = false;
    await wb.sweep();
    expect(source.writeBacks).toBe(1);
    expect((await units.find('mem', 'u1'))?.state).toBe('written');
  });

  it('leaves units of a source that is not configured open, warning once', async () => {
    const { a, b } = await unitWithThreeRequests();
    await outbox.markDone(a, { referenceNumber: 'L-A', loadId: null });
    await outbox.markDone(b, { referenceNumber: 'L-B', loadId: null });
    const { logger, lines } = capturingLogger('info');
    const wb = writeBack({}, logger);
    await wb.sweep();
    await wb.sweep();
    expect((await units.find('mem', 'u1'))?.state).toBe('open');
    expect(lines.filter((l) => l.includes('cannot be written back'))).toHaveLength(1);
  });

  it('concurrent calls for one unit write it once (calls are serialised and joined)', async () => {
    const { a, b } = await unitWithThreeRequests();
    await outbox.markDone(a, { referenceNumber: 'L-A', loadId: null });
    await outbox.markDone(b, { referenceNumber: 'L-B', loadId: null });
    const source = new MemorySource();
    const wb = writeBack({ mem: source });
    await Promise.all([wb.forCommands([a]), wb.forCommands([b]), wb.sweep(), wb.forCommands([a, b])]);
    expect(source.writeBacks).toBe(1);
  });

  it('a sweep after a crash writes units whose commands all finished earlier', async () => {
    const { a, b } = await unitWithThreeRequests();
    await outbox.markDone(a, { referenceNumber: 'L-A', loadId: null });
    await outbox.update(b, { state: 'cancelled', finished_at: new Date().toISOString() });
    const source = new MemorySource();
    await writeBack({ mem: source }).sweep();
    expect(source.resultOf('u1', 'r2')).toMatchObject({ status: 'failed', error: `cancelled by an operator (freight-sync outbox cancel ${b})` });
  });
});

describe('resultOf', () => {
  it('maps final rows to results with the precise error', async () => {
    const id = await enqueue(outbox, createCommand('A'));
    await outbox.markDead(id, 'gave up after 3 attempts: HTTP 503');
    const r = resultOf('r1', (await outbox.get(id))!);
    expect(r).toMatchObject({ ref: 'r1', status: 'failed', error: 'gave up after 3 attempts: HTTP 503', outboxId: id, referenceNumber: null });
    expect(r.finishedAt).toBe((await outbox.get(id))!.finished_at);
  });
});
