import path from 'node:path';
import { it } from 'vitest';
import { insertStagingCreates, writeCreatesCsv } from '../helpers/outbound-fixtures.js';
import { outboundConfig, syncDirectory, withApp } from '../helpers/outbound-harness.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';
import { createOutboundEngine } from '../../src/outbound/outbound-engine.js';
it('speed', async () => {
  const sim = await startSim({ loads: 500, customers: 20, consignees: 10 });
  const dir = tempDir('speed');
  const config = outboundConfig({ sim, dir, connectors: { erp_inbox: { type: 'inbox', options: { dir: 'inbox' } }, erp_sql: { type: 'sql', options: { dialect: 'sqlite', filename: 'erp.sqlite', staging: { claimBatch: 5000 } } } }, outbound: { sources: ['erp_inbox', 'erp_sql'] } });
  await syncDirectory(config, dir);
  writeCreatesCsv(path.join(dir, 'inbox', 'orders.csv'), 1000);
  insertStagingCreates(path.join(dir, 'erp.sqlite'), 1000);
  await withApp(config, dir, async (app) => {
    const engine = createOutboundEngine(app, { abortSignal: new AbortController().signal });
    let t = Date.now();
    await engine.poll(new AbortController().signal, { settleMs: 300 });
    console.log('poll', Date.now() - t); t = Date.now();
    await engine.dispatcher.drain({ stopSignal: new AbortController().signal, abortSignal: new AbortController().signal, untilIdle: { maxWaitMs: 1000 } });
    console.log('drain', Date.now() - t, JSON.stringify(app.client.stats));
  });
  await sim.close();
});
