import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createStores } from '../../src/state/stores/index.js';
import type { InboxEntry } from '../../src/state/stores/webhook-inbox-store.js';
import { installCommitAudit, readSettlements, settledTwice } from '../chaos/cluster-audit.js';
import { stateClient } from '../chaos/cluster-replicas.js';
import { freshStateOn, stateDialects, type FreshState } from '../helpers/state-db.js';

/**
 * The cluster chaos suite's "settled twice" check counts, per webhook inbox row, the settlements as
 * done that committed (a statement trigger of the commit audit), not failed attempts the replicas
 * logged: a SIGKILL between a failed attempt's commit and its log line once made an event that
 * failed (its account needed re-authentication) and was then done look settled twice (cluster
 * chaos seed 37017, a01_brk). These cases pin what the check counts on the real store.
 */
const onPostgres = (await stateDialects()).includes('postgres');
const WINDOW = 3_600_000;
const NOW = '2024-06-01T12:00:00.000Z';
const at = (second: number) => new Date(Date.parse('2024-06-01T11:00:00.000Z') + second * 1000).toISOString();
const entry = (key: string, receivedAt: string): InboxEntry => ({
  key,
  eventType: 'load#status_updated',
  family: 'load',
  referenceNumber: 'R1',
  body: `{"k":"${key}"}`,
  source: 'delivery',
  occurredAt: null,
  receivedAt,
});

let state: FreshState | undefined;
let client: pg.Client | undefined;
afterEach(async () => {
  await client?.end();
  await state?.dispose();
  client = state = undefined;
});

async function audited() {
  state = await freshStateOn('postgres');
  const location = state.location as Extract<FreshState['location'], { kind: 'postgres' }>;
  client = await stateClient(location.url, location.schema);
  await installCommitAudit(client, location.schema);
  return { inbox: createStores(state.db).webhookInbox, settlements: () => readSettlements(client!) };
}

describe.skipIf(!onPostgres)('the cluster chaos audit of webhook settlements (PostgreSQL)', () => {
  it('counts a second settlement of the same take as settled twice', async () => {
    const { inbox, settlements } = await audited();
    await inbox.accept(entry('body:a', at(0)), WINDOW);
    const taken = await inbox.due(1, NOW);
    expect(await inbox.markDone(taken, NOW)).toHaveLength(1);
    expect(settledTwice((await settlements()).get(taken[0]!.id))).toBe(false);
    // The same take settled again (what two processors holding one row would do).
    await inbox.markDone(taken, NOW);
    expect((await settlements()).get(taken[0]!.id)).toEqual({ done: 2, reopened: 0 });
    expect(settledTwice((await settlements()).get(taken[0]!.id))).toBe(true);
  });

  it('a failed attempt then done is one settlement; done, re-opened by the same body, done again is not twice', async () => {
    const { inbox, settlements } = await audited();
    await inbox.accept(entry('body:b', at(0)), WINDOW);
    const [first] = await inbox.due(1, NOW);
    expect(await inbox.markFailed(first!, 'reauth_required', NOW, 5)).toBe('pending');
    const [retry] = await inbox.due(1, NOW);
    await inbox.markDone([retry!], NOW);
    // attempts is 2 here: the count the old check used, less the failures it found in the logs.
    expect((await inbox.byIds([first!.id]))[0]).toMatchObject({ state: 'done', attempts: 2 });
    expect((await settlements()).get(first!.id)).toEqual({ done: 1, reopened: 0 });

    // A new change with the same body after it was processed: pending again, then done again.
    expect(await inbox.accept(entry('body:b', at(60)), WINDOW)).toBe('rearmed');
    await inbox.markDone(await inbox.due(1, NOW), NOW);
    const counted = (await settlements()).get(first!.id);
    expect(counted).toEqual({ done: 2, reopened: 1 });
    expect(settledTwice(counted)).toBe(false);
  });
});
