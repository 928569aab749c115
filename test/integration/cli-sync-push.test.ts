import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { PushSummary } from '../../src/outbound/run-push.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import type { StreamRunSummary } from '../../src/sync/stream-runner.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { loadsByErpKey, outboundConfigRaw } from '../helpers/outbound-harness.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';

/**
 * `sync --push` (issue 13): the one-shot pass of a cron deployment — pull every enabled stream,
 * then one push of the outbound sources — with the exit codes of `sync` and `push` combined.
 * Plain `sync` never pushes, whatever is configured.
 */
describe('freight-sync sync --push', () => {
  let sim: SimulatorHandle;
  beforeAll(async () => {
    sim = await startSim({ loads: 40, customers: 10, consignees: 5 });
  });
  afterAll(async () => sim.close());

  function deployment(name: string, sources = ['erp_inbox']): { dir: string; inbox: string; configFile: string } {
    const dir = tempDir(`sync-push-${name}`);
    const raw = outboundConfigRaw({ sim, dir, connectors: { erp_inbox: { type: 'inbox', options: { dir: 'inbox' } } }, outbound: { sources } }) as Record<string, any>;
    process.env.SYNC_PUSH_TEST_SECRET = sim.options.clientSecret;
    raw.api.auth.clientSecret = '${SYNC_PUSH_TEST_SECRET}';
    const configFile = path.join(dir, 'freight-sync.yaml');
    fs.writeFileSync(configFile, stringify(raw));
    const inbox = path.join(dir, 'inbox');
    fs.mkdirSync(inbox, { recursive: true });
    return { dir, inbox, configFile };
  }
  const orders = (rows: string[]) => `erp_key,kind,type_of_load,preSetOrderStatus,caller,shipper\r\n${rows.join('\r\n')}\r\n`;

  it('pulls, then pushes what the inbox holds (ERP codes resolved from customers pulled in the same pass); exit 0', async () => {
    const { inbox, configFile } = deployment('ok');
    fs.writeFileSync(path.join(inbox, 'orders.csv'), orders(['CRON-1,create,IMPORT,,CUS000001,CUS000002', 'CRON-2,create,EXPORT,,CUS000001,CUS000003']));

    const result = await runCliInProcess(['sync', '--push', '--json', '--max-wait', 'PT30S', '-c', configFile]);
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as { streams: StreamRunSummary[]; push: PushSummary };
    expect(summary.streams.map((s) => [s.stream, s.status])).toEqual([
      ['loads', 'ok'],
      ['customers', 'ok'],
      ['consignees', 'ok'],
    ]);
    expect(summary.streams.find((s) => s.stream === 'loads')!.delivered).toBe(40);
    expect(summary.push).toMatchObject({ units: 1, commands: 2, invalid: 0, done: 2, dead: 0, sourceErrors: [] });
    const created = await loadsByErpKey(sim, ['CRON-1', 'CRON-2']);
    expect([...created.keys()].sort()).toEqual(['CRON-1', 'CRON-2']);
    expect(fs.existsSync(path.join(inbox, 'orders.csv'))).toBe(false);
  });

  it('plain sync leaves the outbound sources alone; the table form of --push shows both summaries', async () => {
    const { inbox, configFile } = deployment('opt-in');
    fs.writeFileSync(path.join(inbox, 'orders.csv'), orders(['CRON-3,create,IMPORT,,CUS000001,CUS000002']));
    const writesBefore = sim.stats().byRoute['POST /loads'] ?? {};

    const plain = await runCliInProcess(['sync', '-c', configFile]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toMatch(/units taken/);
    expect(fs.existsSync(path.join(inbox, 'orders.csv'))).toBe(true);
    expect(sim.stats().byRoute['POST /loads'] ?? {}).toEqual(writesBefore);

    const table = await runCliInProcess(['sync', '--push', '-c', configFile]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^stream\s+status\s+delivered/);
    expect(table.stdout).toMatch(/units taken\s+1/);
    expect(table.stdout).toMatch(/\ndone\s+1/);
  });

  it('exits 1 when a request is rejected (the pull itself was fine)', async () => {
    const { inbox, configFile } = deployment('rejected');
    fs.writeFileSync(path.join(inbox, 'orders.csv'), orders(['CRON-4,create,IMPRT,,CUS000001,CUS000002']));
    const result = await runCliInProcess(['sync', '--push', '--json', '-c', configFile]);
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout) as { streams: StreamRunSummary[]; push: PushSummary };
    expect(summary.streams.every((s) => s.status === 'ok')).toBe(true);
    expect(summary.push.invalid).toBe(1);
  });

  it('exits 2 when no outbound source is configured, before pulling anything', async () => {
    const { dir, configFile } = deployment('no-source', []);
    const before = sim.stats().requests;
    expect((await runCliInProcess(['sync', '--push', '-c', configFile])).code).toBe(2);
    expect((await runCliInProcess(['sync', '--push', '--max-wait', 'five', '-c', configFile])).code).toBe(2);
    expect(sim.stats().requests).toBe(before);
    expect(fs.existsSync(path.join(dir, 'state.sqlite'))).toBe(false);
  });
});
