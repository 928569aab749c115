import path from 'node:path';
import { openApp, type AppContext } from '../src/app/compose.js';
import { parseConfig } from '../src/config/parse-config.js';
import { silentLogger } from '../src/util/logger.js';
import type { SimulatorProcess } from './simulator-process.js';

/** The slim 5-column loads mapping: the engine's cost without the default mapping's (a second row beside the default). */
export const SLIM_LOADS_MAPPING = {
  table: 'loads',
  key: ['record_key'],
  columns: [
    { name: 'record_key', path: '$key' },
    { name: 'status', path: 'status' },
    { name: 'caller', path: 'callerName' },
    { name: 'container_no', path: 'containerNo' },
    { name: 'total', path: 'totalAmount', transform: 'number' },
  ],
};

/**
 * The app, in this process, syncing only the loads stream from a simulator process into the
 * connector `out`, state in `dir`, no rate limit, silent: what the in-process benches run.
 */
export async function openLoadsBackfillApp(sim: SimulatorProcess, dir: string, dataStart: string, out: Record<string, unknown>): Promise<AppContext> {
  const config = parseConfig(
    {
      api: {
        variant: 'main',
        baseUrl: sim.baseUrl,
        auth: { clientId: sim.clientId, clientSecret: sim.clientSecret },
        rateLimit: { requestsPerSecond: 100_000, maxInFlight: 1 },
      },
      state: { path: path.join(dir, 'state.sqlite') },
      log: { level: 'silent' },
      sync: { defaults: { initialFrom: dataStart }, streams: { loads: { enabled: true, sinks: ['out'] } } },
      connectors: { out },
    },
    { source: 'bench', baseDir: dir },
  );
  return openApp({ config, filePath: path.join(dir, 'bench.yaml'), baseDir: dir }, { logger: silentLogger(), withConnectors: true });
}
