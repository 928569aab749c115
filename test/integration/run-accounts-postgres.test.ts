import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCli, type CliRun } from '../helpers/cli-process.js';
import { freePort } from '../helpers/daemon-harness.js';
import { collectTruth, compareWithTruth, issuePair, latestByKey, readCsvRows, startSim, tempDir, TEST_SAFETY_LAG_MS } from '../helpers/pull-harness.js';
import { dropPostgresSchema, postgresStateLocation, postgresUrlForTests } from '../helpers/state-db.js';

/**
 * Issue 11, item 2: one deployment, two API accounts — one on the main variant with client
 * credentials, one on the brokerage variant with a bare token pair — run by `freight-sync run` as
 * real processes on PostgreSQL state. One replica works both; a second one joining gets its share
 * (the first hands one account over, drained); each account's sinks match its own API; webhooks
 * are verified with each account's own secret on its own path; /metrics and `status` name the
 * accounts; no rotated-away refresh token is ever used.
 */
const POSTGRES = await postgresUrlForTests();
const schema = postgresStateLocation(POSTGRES ?? 'postgres://unused').schema;
const SECRETS = { acme: 'whsec-acme-5f1e', broker: 'whsec-broker-93aa' } as const;
let mainSim: SimulatorHandle;
let brokerSim: SimulatorHandle;
const children: CliRun[] = [];

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(check).catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `freight_sync_lease_held` per account from a replica's /metrics (undefined when it does not answer). */
async function leasesHeld(opsPort: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  const held: Record<string, number> = {};
  for (const match of text.matchAll(/^freight_sync_lease_held\{account="([a-z_]+)"\} (\d+)$/gm)) held[match[1]!] = Number(match[2]);
  return held;
}

function sign(secret: string, body: string): string {
  return `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`;
}

beforeAll(async () => {
  mainSim = await startSim({ variant: 'main', loads: 120 });
  brokerSim = await startSim({ variant: 'brokerage', loads: 90 });
});
afterAll(async () => {
  for (const child of children) if (child.child.exitCode === null) child.child.kill('SIGKILL');
  await mainSim?.close();
  await brokerSim?.close();
  if (POSTGRES) for (const s of [schema, `${schema}_acme`, `${schema}_broker`]) await dropPostgresSchema(POSTGRES, s);
});

describe.skipIf(POSTGRES === undefined)('one deployment, two accounts, two replicas on PostgreSQL', () => {
  it('shares the accounts between replicas; each account syncs its own API into its own sink', async () => {
    const dir = tempDir('accounts');
    const pair = await issuePair(brokerSim);
    const streamsTo = (name: string) => ({
      connectors: { out: { type: 'csv', options: { directory: path.join(dir, 'out', name) } } },
    });
    const config = {
      state: { url: POSTGRES, schema },
      log: { level: 'info' },
      http: { listen: '127.0.0.1:${OPS_PORT}' },
      cluster: { leaseTtl: 'PT4S', claimInterval: 'PT0.3S', heartbeat: 'PT0.5S' },
      // Defaults every account inherits.
      api: { rateLimit: { requestsPerSecond: 500, maxInFlight: 4 }, retry: { maxAttempts: 12, baseDelay: 'PT0.02S', maxDelay: 'PT0.5S' }, timeout: 'PT5S' },
      sync: { defaults: { schedule: '* * * * *', lookback: 'PT2M', safetyLag: `PT${TEST_SAFETY_LAG_MS / 1000}S`, maxWindow: 'P30D', minWindow: 'PT1S' } },
      webhooks: { enabled: true, listen: '127.0.0.1:${HOOK_PORT}', catchUpInterval: 'PT0S' },
      accounts: [
        {
          name: 'acme',
          api: { variant: 'main', baseUrl: mainSim.baseUrl, auth: { clientId: mainSim.options.clientId, clientSecret: mainSim.options.clientSecret } },
          webhooks: { secret: SECRETS.acme },
          ...streamsTo('acme'),
          sync: { defaults: { initialFrom: mainSim.options.dataStart }, streams: { loads: { enabled: true, sinks: ['out'] } } },
        },
        {
          name: 'broker',
          api: { variant: 'brokerage', baseUrl: brokerSim.baseUrl, auth: pair },
          webhooks: { secret: SECRETS.broker },
          ...streamsTo('broker'),
          sync: { defaults: { initialFrom: brokerSim.options.dataStart }, streams: { loads: { enabled: true, sinks: ['out'] } } },
        },
      ],
    };
    const file = path.join(dir, 'freight-sync.yaml');
    fs.writeFileSync(file, stringify(config));

    const replica = async () => {
      const ports = { ops: await freePort(), hooks: await freePort() };
      const child = runCli(['run', '-c', file], { env: { OPS_PORT: String(ports.ops), HOOK_PORT: String(ports.hooks) } });
      children.push(child);
      return { child, ...ports };
    };

    // One replica: it works both accounts (its share of 2 accounts among 1 replica is 2).
    const first = await replica();
    await until(async () => {
      const held = await leasesHeld(first.ops);
      return held.acme === 1 && held.broker === 1;
    }, 'the first replica to work both accounts');

    // Each account's sink matches its own API (the initial pass), nothing of the other's.
    for (const [name, sim] of [['acme', mainSim], ['broker', brokerSim]] as const) {
      const truth = await collectTruth(sim, 'loads');
      await until(() => {
        const cmp = compareWithTruth(truth, latestByKey(readCsvRows(path.join(dir, 'out', name), 'loads')), (r) => String(r.reference_number));
        return cmp.missing.length === 0 && cmp.stale.length === 0 && cmp.phantom.length === 0;
      }, `account ${name}'s sink to match its API`);
    }

    // Webhooks: each account's path verifies with its own secret only.
    const [someLoad] = await collectTruth(mainSim, 'loads');
    const body = JSON.stringify({ changedValues: { officeNote: 'x' }, _id: someLoad!._id, reference_number: someLoad!.reference_number, eventType: 'load#info_updated' });
    const post = (account: string, secret: string) =>
      fetch(`http://127.0.0.1:${first.hooks}/webhooks/${account}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Hub-Signature': sign(secret, body) }, body }).then((r) => r.status);
    expect(await post('acme', SECRETS.acme)).toBe(200);
    expect(await post('acme', SECRETS.broker)).toBe(401);
    expect(await post('broker', SECRETS.acme)).toBe(401);

    // /readyz names each account's checks; /metrics has one family with a series per account.
    const ready = (await (await fetch(`http://127.0.0.1:${first.ops}/readyz`)).json()) as { status: string; checks: Record<string, unknown> };
    expect(ready.status).toBe('ready');
    expect(Object.keys(ready.checks)).toEqual(expect.arrayContaining(['state:acme', 'state:broker', 'api:acme', 'api:broker']));
    const metrics = await (await fetch(`http://127.0.0.1:${first.ops}/metrics`)).text();
    expect(metrics.match(/^# TYPE freight_sync_lease_held gauge$/gm)).toHaveLength(1);
    expect(metrics.match(/^# TYPE freight_sync_process_cpu_seconds_total counter$/gm)).toHaveLength(1);
    expect(metrics).toMatch(/^freight_sync_records_written_total\{[^}]*account="broker"[^}]*\} \d+/m);

    // A second replica joins: the first hands one account over (drained), the second claims it.
    const second = await replica();
    await until(async () => {
      const [a, b] = [await leasesHeld(first.ops), await leasesHeld(second.ops)];
      const worked = (h: Record<string, number>) => Object.values(h).filter((v) => v === 1).length;
      return worked(a) === 1 && worked(b) === 1 && a.acme !== b.acme;
    }, 'one account on each replica');

    // status (another process) names each account and the replica working it.
    const status = runCli(['status', '-c', file, '--json', '--offline'], { env: { OPS_PORT: '1', HOOK_PORT: '2' } });
    expect((await status.exited).code).toBe(0);
    const report = JSON.parse(status.stdout()) as { accounts: Array<{ account: string; lease: { holder: string } | null }> };
    expect(report.accounts.map((a) => a.account)).toEqual(['acme', 'broker']);
    const holders = report.accounts.map((a) => a.lease?.holder);
    expect(holders.every((h) => typeof h === 'string')).toBe(true);
    expect(new Set(holders).size).toBe(2);

    // Both drain on SIGTERM and exit 0; the brokerage pair was never used after its rotation.
    for (const { child } of [second, first]) child.child.kill('SIGTERM');
    for (const { child } of [second, first]) expect((await child.exited).code).toBe(0);
    expect(brokerSim.stats().retiredRefreshTokenUses).toBe(0);
  });
});
