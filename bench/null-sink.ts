import { z } from 'zod';
import type { ConnectorFactory } from '../src/contracts/index.js';

/**
 * A sink that counts and discards: isolates the engine's own cost (paging, parsing, hashing,
 * checkpoints) from any sink's. Loaded as a third-party connector module by the benchmarks.
 */
export const connector: ConnectorFactory<Record<string, never>> = {
  name: 'null',
  configSchema: z.strictObject({}),
  create() {
    let records = 0;
    return {
      sink: {
        async write(batch) {
          records += batch.records.length;
        },
      },
      async close() {
        if (process.env.FREIGHT_SYNC_BENCH_VERBOSE === '1') process.stderr.write(`null sink received ${records} records\n`);
      },
    };
  },
};
export default connector;
