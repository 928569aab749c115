import { createHmac } from 'node:crypto';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { freePort, opsUrl, startDaemon, webhookUrl, type RunningDaemon } from '../helpers/daemon-harness.js';
import { collectTruth, pullConfig, readCsvRows, startSim, tempDir } from '../helpers/pull-harness.js';
import { dropPostgresSchema, postgresStateLocation, postgresUrlForTests } from '../helpers/state-db.js';

/**
 * Issue 11: two `run` replicas of one deployment on PostgreSQL state. One works the account (its
 * lease), the other stands by yet receives webhooks into the shared inbox, which the worker
 * processes; when the worker stops, the standby takes the work over on its next claim.
 */
const POSTGRES = await postgresUrlForTests();
const SECRET = 'whsec-replicas-test-77a1';
const schema = postgresStateLocation(POSTGRES ?? 'postgres://unused').schema;
let sim: SimulatorHandle;
const daemons: RunningDaemon[] = [];

function sign(body: string): string {
  return `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`;
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function leaseHeld(daemon: RunningDaemon): Promise<number> {
  const text = await (await fetch(opsUrl(daemon.app.config, '/metrics'))).text();
  const match = /^freight_sync_lease_held\{[^}]*\} (\d+)/m.exec(text);
  return match ? Number(match[1]) : -1;
}

beforeAll(async () => {
  sim = await startSim({ variant: 'main', loads: 200 });
});
afterEach(async () => {
  for (const daemon of daemons.splice(0)) await daemon.stop();
});
afterAll(async () => {
  await sim?.close();
  if (POSTGRES) await dropPostgresSchema(POSTGRES, schema);
});

describe.skipIf(POSTGRES === undefined)('run replicas on PostgreSQL state', () => {
  it('one works, the other stands by and receives; stopping the worker hands the work over', async () => {
    const dir = tempDir('replicas');
    const configFor = async () =>
      pullConfig({
        sim,
        dir,
        streams: ['loads'],
        // Polling stays out of the way (a yearly cron): what lands came through webhooks.
        streamSettings: { schedule: '0 0 1 1 *' },
        raw: {
          state: { url: POSTGRES, schema },
          cluster: { leaseTtl: 'PT4S', claimInterval: 'PT0.2S', heartbeat: 'PT1S' },
          webhooks: { enabled: true, listen: `127.0.0.1:${await freePort()}`, secret: SECRET, catchUpInterval: 'PT0S' },
          http: { listen: `127.0.0.1:${await freePort()}` },
        },
      });
    const first = await startDaemon(await configFor(), dir);
    daemons.push(first);
    const second = await startDaemon(await configFor(), dir);
    daemons.push(second);
    expect(await leaseHeld(first)).toBe(1);
    expect(await leaseHeld(second)).toBe(0);
    const epoch = Number((await first.app.db.selectFrom('account_leases').select('epoch').executeTakeFirstOrThrow()).epoch);

    // A delivery to the standby is committed there and processed by the worker.
    const [load, other] = await collectTruth(sim, 'loads');
    const deliver = async (daemon: RunningDaemon, record: Record<string, unknown>) => {
      const body = JSON.stringify({ changedValues: { officeNote: 'x' }, _id: record._id, reference_number: record.reference_number, eventType: 'load#info_updated' });
      const response = await fetch(webhookUrl(daemon.app.config), { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Hub-Signature': sign(body) }, body });
      return response.status;
    };
    expect(await deliver(second, load!)).toBe(200);
    const out = path.join(dir, 'out');
    await until(() => readCsvRows(out, 'loads').some((r) => r.record_key === String(load!.reference_number)), 'the worker to deliver the load the standby received');

    // The worker stops (SIGTERM: drain, release): the standby claims the work with a new epoch.
    await first.stop();
    daemons.splice(daemons.indexOf(first), 1);
    await until(async () => (await leaseHeld(second)) === 1, 'the standby to take the work over');
    const after = Number((await second.app.db.selectFrom('account_leases').select('epoch').executeTakeFirstOrThrow()).epoch);
    expect(after).toBeGreaterThan(epoch);
    expect(await deliver(second, other!)).toBe(200);
    await until(() => readCsvRows(out, 'loads').some((r) => r.record_key === String(other!.reference_number)), 'the new worker to deliver');
    // The inbox row is settled just after the sinks acknowledged.
    const states = async () => (await second.app.db.selectFrom('webhook_inbox').select(['state']).execute()).map((r) => r.state);
    await until(async () => !(await states()).includes('pending'), 'the inbox to settle');
    expect(await states()).toEqual(['done', 'done']);
  });
});
