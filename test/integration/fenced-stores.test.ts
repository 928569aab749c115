import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseLostError, LeaseStore, type Lease } from '../../src/state/leases/index.js';
import { createStores, type StateStores } from '../../src/state/stores/index.js';
import type { InboxEntry } from '../../src/state/stores/webhook-inbox-store.js';
import type { StateTables } from '../../src/state/tables.js';
import { createCommand, enqueue } from '../helpers/outbox-rows.js';
import { freshStateDatabase } from '../helpers/state-db.js';

/*
 * Which writes a fenced store set refuses after the lease is gone, and which it must keep making
 * (SQLite, every migration; the fence check itself is exercised on both dialects in
 * account-leases.test.ts).
 */
const entry = (key: string): InboxEntry => ({
  key,
  eventType: 'load#updated',
  family: 'load',
  referenceNumber: 'R1',
  body: '{}',
  source: 'delivery',
  occurredAt: null,
  receivedAt: new Date().toISOString(),
});

describe('stores fenced by an account lease', () => {
  let db: Kysely<StateTables>;
  let plain: StateStores;
  let fenced: StateStores;
  let lease: Lease;
  beforeEach(async () => {
    ({ db } = await freshStateDatabase());
    plain = createStores(db);
    [lease] = (await new LeaseStore(db).claim(['acct'], { holder: 'A', ttlMs: 60_000 })) as [Lease];
    fenced = createStores(db, { fence: lease });
  });
  afterEach(async () => db.destroy());

  async function loseLease(): Promise<void> {
    await db.updateTable('account_leases').set({ expires_at_ms: 0 }).execute();
    await new LeaseStore(db).claim(['acct'], { holder: 'B', ttlMs: 60_000 });
  }

  it('outbox transitions commit while the lease holds, and are refused (row unchanged) once it is lost', async () => {
    const id = await enqueue(plain.outbox, createCommand('E1'));
    await fenced.outbox.markSending(id, 1, new Date().toISOString());
    expect((await plain.outbox.get(id))!.state).toBe('sending');
    await loseLease();
    await expect(fenced.outbox.markDone(id, { referenceNumber: 'R1', loadId: 'L1' })).rejects.toBeInstanceOf(LeaseLostError);
    await expect(fenced.outbox.markWaiting(id, 'retry', 'x', new Date())).rejects.toBeInstanceOf(LeaseLostError);
    await expect(fenced.outbox.on(db).markDead(id, 'x')).rejects.toBeInstanceOf(LeaseLostError);
    expect((await plain.outbox.get(id))!.state).toBe('sending');
  });

  it('inbox transitions are fenced; receiving webhooks is not', async () => {
    expect(await fenced.webhookInbox.accept(entry('event:1'), 60_000)).toBe('stored');
    const [row] = await plain.webhookInbox.byIds([1]);
    await loseLease();
    // Any replica receives, lease or not.
    expect(await fenced.webhookInbox.accept(entry('event:2'), 60_000)).toBe('stored');
    await expect(fenced.webhookInbox.markDone([row!], new Date().toISOString())).rejects.toBeInstanceOf(LeaseLostError);
    await expect(fenced.webhookInbox.markFailed(row!, 'boom', new Date().toISOString(), 1)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(fenced.webhookInbox.rearm([row!.id], new Date().toISOString())).rejects.toBeInstanceOf(LeaseLostError);
    expect((await plain.webhookInbox.byIds([row!.id]))[0]).toMatchObject({ state: 'pending', attempts: 0 });
    // markFailed parks into the quarantine in the same transaction: nothing of it committed.
    expect(await db.selectFrom('quarantine').selectAll().execute()).toEqual([]);
  });

  it('a rotated token is saved even by a replica that just lost its lease', async () => {
    await loseLease();
    await fenced.tokens.save('acct', { accessToken: 'a2', refreshToken: 'r2', accessExpiresAt: null });
    expect(await plain.tokens.load('acct')).toMatchObject({ refreshToken: 'r2' });
  });

  it('a fenced transaction commits nothing of its stores once the lease is lost', async () => {
    const id = await enqueue(plain.outbox, createCommand('E2'));
    await loseLease();
    await expect(
      fenced.transaction(async (tx) => {
        await tx.outbox.markDead(id, 'x');
        await tx.seen.remember('loads', [{ key: 'k', hash: 'h' }]);
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect((await plain.outbox.get(id))!.state).toBe('pending');
    expect(await db.selectFrom('seen_records').selectAll().execute()).toEqual([]);
  });
});
