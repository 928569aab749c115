import path from 'node:path';
import { it } from 'vitest';
import { insertStagingCreates, writeCreatesCsv } from '../helpers/outbound-fixtures.js';
import { outboundConfig, push, syncDirectory } from '../helpers/outbound-harness.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';
it('speed', async () => {
  const sim = await startSim({ loads: 500, customers: 20, consignees: 10 });
  const dir = tempDir('speed');
  const config = outboundConfig({ sim, dir, connectors: { erp_inbox: { type: 'inbox', options: { dir: 'inbox' } }, erp_sql: { type: 'sql', options: { dialect: 'sqlite', filename: 'erp.sqlite', staging: { claimBatch: 5000 } } } }, outbound: { sources: ['erp_inbox', 'erp_sql'] } });
  await syncDirectory(config, dir);
  writeCreatesCsv(path.join(dir, 'inbox', 'orders.csv'), 1000);
  insertStagingCreates(path.join(dir, 'erp.sqlite'), 1000);
  const t = Date.now();
  console.log(JSON.stringify(await push(config, dir)), Date.now() - t);
  await sim.close();
});
