import { it } from 'vitest';
import pLimit from 'p-limit';
import { outboundConfig, withApp } from '../helpers/outbound-harness.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';
import { createLoad } from '../../src/api/endpoints/loads.js';
it('speed', async () => {
  const sim = await startSim({ loads: 500, customers: 20, consignees: 10 });
  const dir = tempDir('speed');
  const config = outboundConfig({ sim, dir });
  await withApp(config, dir, async (app) => {
    const { customerId } = await import('../../src/simulator/dataset/customers.js');
    const limit = pLimit(8);
    const t = Date.now();
    const caller = (await (await fetch(`${sim.adminUrl}/truth?resource=customers`)).text()).split('\n')[0]!;
    const id = JSON.parse(caller)._id;
    await Promise.all(Array.from({ length: 1000 }, (_, i) => limit(() => createLoad(app.client, { type_of_load: 'IMPORT', preSetOrderStatus: '', caller: id, shipper: [id], secondaryReferenceNo: `K${i}` }))));
    console.log('creates', Date.now() - t);
  });
  await sim.close();
});
