import { describe, expect, it } from 'vitest';
import type { CommandSource } from '../../src/contracts/index.js';
import { encodeCommand } from '../../src/outbound/command-codec.js';
import type { OutboundCommand } from '../../src/outbound/commands/command.js';
import { wouldDo } from '../../src/outbound/dry-run-outcome.js';
import { runDryRun } from '../../src/outbound/dry-run.js';
import { Intake } from '../../src/outbound/intake.js';
import { MemorySource } from '../../src/outbound/memory-source.js';
import { rehearse } from '../../src/state/stores/rehearse.js';
import { silentLogger } from '../../src/util/logger.js';
import { createRequest as create, freshStoresPerTest } from '../helpers/outbound-fixtures.js';

const signal = new AbortController().signal;

const state = freshStoresPerTest();

async function outboundRows(): Promise<number> {
  const count = async (table: 'outbox' | 'outbox_units' | 'outbox_inbound') => Number((await state.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return (await count('outbox')) + (await count('outbox_units')) + (await count('outbox_inbound'));
}

describe('wouldDo: what a push would send, worded from the command kind', () => {
  const row = (command: Record<string, unknown>) => ({ kind: String(command['kind']), payload: encodeCommand(command as unknown as OutboundCommand).payload });

  it('words the four load kinds with their target', () => {
    expect(wouldDo(row({ kind: 'create', erpKey: 'K', body: {} }))).toBe('would create load');
    expect(wouldDo(row({ kind: 'update', erpKey: 'K', target: { referenceNumber: 'M100' }, body: {} }))).toBe('would update load M100');
    expect(wouldDo(row({ kind: 'status', erpKey: 'K', target: { loadErpKey: 'SO-1' }, params: { status: 'AVAILABLE' } }))).toBe(
      'would change the status of load erp_key SO-1 to AVAILABLE',
    );
    expect(wouldDo(row({ kind: 'document', erpKey: 'K', target: { referenceNumber: 'M1' } }))).toBe('would upload a document to load M1');
  });

  it('words kinds it has never seen from their <noun>_<verb> name, so new kinds need no change', () => {
    expect(wouldDo(row({ kind: 'customer_create', erpKey: 'C' }))).toBe('would create customer');
    expect(wouldDo(row({ kind: 'customer_update', erpKey: 'C' }))).toBe('would update customer');
    expect(wouldDo(row({ kind: 'load_delete', erpKey: 'K', target: { referenceNumber: 'M7' } }))).toBe('would delete load M7');
    expect(wouldDo(row({ kind: 'invoice_create', erpKey: 'I' }))).toBe('would create invoice');
    expect(wouldDo({ kind: 'frobnicate', payload: 'not json' })).toBe('would send frobnicate');
  });
});

describe('rehearse: a state transaction that is always rolled back', () => {
  it('lets the work read its own writes (also through a joined inner transaction), then leaves nothing', async () => {
    const seen = await rehearse(state.stores, async (tx) => {
      await tx.units.insert('mem', 'u1', 'memory:u1', 1);
      await tx.transaction((inner) => inner.units.addEntry('mem', 'u1', { ref: '1', seq: 1, outboxId: null, error: 'x', note: null }));
      return (await tx.units.entries('mem', 'u1')).length;
    });
    expect(seen).toBe(1);
    expect(await outboundRows()).toBe(0);
  });

  it('rethrows an error of the work, and rolls back too', async () => {
    await expect(
      rehearse(state.stores, async (tx) => {
        await tx.units.insert('mem', 'u1', 'memory:u1', 1);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await outboundRows()).toBe(0);
  });
});

describe('runDryRun', () => {
  it('reports the intake outcome of every request, writes them back through writeDryRun, and takes and stores nothing', async () => {
    const source = new MemorySource();
    source.add('u1', [create('A'), create('B', { type_of_load: 'IMPRT' }), { erp_key: 'A', kind: 'status', status: 'AVAILABLE' }, create('A')]);
    const noPeek: CommandSource = { take: async () => [], accepted: async () => {}, writeBack: async () => {} };

    const summary = await runDryRun(
      { stores: state.stores, variant: 'main', logger: silentLogger(), sources: [{ name: 'mem', source }, { name: 'old', source: noPeek }] },
      signal,
    );
    expect(summary.results.map((r) => [r.ref, r.erpKey, r.kind, r.status, r.outcome])).toEqual([
      ['1', 'A', 'create', 'ok', 'would create load'],
      ['2', 'B', 'create', 'failed', 'error'],
      ['3', 'A', 'status', 'ok', 'would change the status of load erp_key A to AVAILABLE'],
      ['4', 'A', 'create', 'ok', 'would create load (duplicate of ref 1: sent once)'],
    ]);
    expect(summary.results[1]!.error).toBe('type_of_load: "IMPRT" is not one of IMPORT, EXPORT, ROAD, BILL_ONLY (did you mean IMPORT?)');
    expect(summary).toMatchObject({ units: 1, requests: 4, ok: 3, failed: 1, unitsWrittenBack: 1 });
    expect(summary.sourceErrors).toEqual(['old: cannot be dry-run (its connector has no way to read commands without taking them)']);
    expect(source.dryRunResults.get('u1')!.map((r) => r.outcome)).toEqual(summary.results.map((r) => r.outcome));
    expect(source.acceptedIds.size).toBe(0);
    expect(await outboundRows()).toBe(0);
  });

  it('a request already pushed is "already done" with its load; one already queued is "already queued"', async () => {
    const intake = new Intake({ stores: state.stores, variant: 'main', logger: silentLogger() });
    const earlier = new MemorySource();
    await intake.store('mem', earlier.add('u0', [create('A'), create('B')]));
    const a = await state.stores.outbox.latest('A', 'create');
    const b = await state.stores.outbox.latest('B', 'create');
    await state.stores.outbox.markDone(a!.id, { referenceNumber: 'M0001', loadId: 'L1' });
    const before = await outboundRows();

    const source = new MemorySource();
    source.add('u1', [create('A'), create('B')]);
    const summary = await runDryRun({ stores: state.stores, variant: 'main', logger: silentLogger(), sources: [{ name: 'mem', source }] }, signal);
    expect(summary.results.map((r) => [r.status, r.outcome, r.referenceNumber, r.outboxId])).toEqual([
      ['ok', `already done (outbox #${a!.id})`, 'M0001', a!.id],
      ['ok', `already queued (outbox #${b!.id}, pending)`, null, b!.id],
    ]);
    expect(await outboundRows()).toBe(before);
  });
});
