import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { startSimulator } from '../src/simulator/index.js';
import { probePostgres } from '../test/helpers/services.js';
import { freshStateOn } from '../test/helpers/state-db.js';
import { installCommitAudit } from '../test/chaos/cluster-audit.js';
import { dbNowMs, liveHolder, measureFailover, readLease, ReplicaSet, stateClient, type Failover } from '../test/chaos/cluster-replicas.js';
import { simulatorApiConfig } from './simulator-api-config.js';
import { freePort, startBuiltCli } from './cli-child.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface FailoverBenchResult {
  replicas: number;
  leaseTtlMs: number;
  claimIntervalMs: number;
  failovers: Failover[];
}

/**
 * Failover time of `freight-sync run` replicas on PostgreSQL state: `kills` times, SIGKILL the
 * lease holder and measure (database clock) until another replica claimed the lease (epoch up) and
 * until its first checkpoint commit (commit audit trigger); the killed replica is restarted after.
 */
export async function benchFailover(options: { replicas: number; kills: number; leaseTtlMs: number; claimIntervalMs: number }): Promise<FailoverBenchResult> {
  const probe = await probePostgres();
  if (!probe.ok || !probe.url) throw new Error(`the failover bench needs PostgreSQL: ${probe.reason}`);
  const sim = await startSimulator({ loads: 2000, seed: 7, mutator: { enabled: true, intervalMs: 500, perTick: 2 } });
  const state = await freshStateOn('postgres');
  const location = state.location as { url: string; schema: string; poolSize: number };
  const client = await stateClient(probe.url, location.schema);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-failover-'));
  let set: ReplicaSet | undefined;
  try {
    await installCommitAudit(client, location.schema);
    const configFile = path.join(dir, 'freight-sync.yaml');
    fs.writeFileSync(
      configFile,
      stringify({
        api: simulatorApiConfig(sim, { requestsPerSecond: 50, maxInFlight: 4 }),
        state: { url: location.url, schema: location.schema, poolSize: location.poolSize },
        log: { level: 'info', pretty: false },
        sync: { defaults: { schedule: '*/2 * * * * *', initialFrom: sim.options.dataStart, lookback: 'PT1M', safetyLag: 'PT2S' }, streams: { loads: { enabled: true, sinks: ['out'] } } },
        connectors: { out: { type: 'csv', options: { directory: path.join(dir, 'out') } } },
        http: { enabled: true, listen: '${FS_HTTP_LISTEN}' },
        cluster: { leaseTtl: `PT${options.leaseTtlMs / 1000}S`, claimInterval: `PT${options.claimIntervalMs / 1000}S`, heartbeat: 'PT1S' },
      }),
    );
    const ports = [];
    for (let i = 0; i < options.replicas; i++) ports.push({ http: await freePort(), webhook: await freePort() });
    set = new ReplicaSet({ configFile, cwd: dir, logFile: path.join(dir, 'replicas.log'), env: {}, ports, logLevel: 'info', start: startBuiltCli });
    set.startAll();
    const failovers: Failover[] = [];
    for (let i = 0; i < options.kills; i++) {
      // A holder that has worked a while (its first pass committed), then the kill.
      await sleep(4_000);
      let holder: ReturnType<ReplicaSet['byHolder']>;
      let epoch = 0;
      for (const until = Date.now() + 60_000; Date.now() < until && !holder; await sleep(100)) {
        const lease = await readLease(client);
        holder = set.byHolder(liveHolder(lease));
        epoch = lease?.epoch ?? 0;
      }
      if (!holder) throw new Error('no replica holds the lease');
      const pid = holder.run.child.pid!;
      const at = await dbNowMs(client);
      await set.kill(holder);
      failovers.push(await measureFailover(client, { action: 'SIGKILL', victim: holder.appName, oldEpoch: epoch }, pid, at, options.leaseTtlMs + options.claimIntervalMs + 30_000));
      process.stderr.write(`  kill ${i + 1}/${options.kills}: claim ${failovers.at(-1)!.claimMs} ms, first checkpoint ${failovers.at(-1)!.commitMs} ms\n`);
      set.restart(holder);
    }
    return { ...options, failovers };
  } finally {
    await set?.killAll();
    await client.end().catch(() => undefined);
    await state.dispose();
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
