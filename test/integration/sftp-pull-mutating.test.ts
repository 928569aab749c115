import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { ageChangesPastSafetyLag, collectTruth, compareWithTruth, latestByKey, pullConfig, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';
import { requireService } from '../helpers/services.js';
import { probeSshd, startSshd, type SshdHandle } from '../helpers/sshd.js';

/**
 * The pull engine's acceptance scenario with an SFTP drop instead of a local folder: the
 * simulator mutates loads every 100 ms during the backfill; after one more `sync`, the remote
 * files read as latest-version-per-key must equal the server's truth. 5,000 loads by default
 * (CI); `SFTP_PULL_SCENARIO_LOADS=20000` for the full acceptance run.
 */
const LOADS = Number(process.env.SFTP_PULL_SCENARIO_LOADS ?? 5_000);
const available = requireService('a real OpenSSH sshd on loopback', probeSshd());

describe.skipIf(!available)(`pull: ${LOADS} mutating loads into an SFTP drop`, () => {
  let sshd: SshdHandle;
  let sim: SimulatorHandle | undefined;

  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  it('the remote files equal the truth (0 missing, 0 stale, tombstones), no temp files left', async () => {
    const started = Date.now();
    sim = await startSim({ variant: 'main', loads: LOADS, seed: 11, mutator: { enabled: true, intervalMs: 100, perTick: 5 } });
    const dir = tempDir('pull-sftp');
    const remoteDir = path.join(sshd.root, 'erp', 'loads-drop');
    const config = pullConfig({
      sim,
      dir,
      streams: ['loads'],
      raw: {
        connectors: {
          out: {
            type: 'sftp',
            options: {
              host: sshd.host,
              port: sshd.port,
              username: sshd.username,
              privateKeyPath: sshd.privateKeyPath,
              hostKeySha256: sshd.hostKeySha256,
              remoteDir,
              marker: 'manifest',
              maxParallelTransfers: 4,
              reconnect: { attempts: 3, baseDelay: 100 },
            },
          },
        },
      },
    });
    const backfill = await syncOnce(config, dir);
    expect(backfill[0]!.status, backfill[0]!.error ?? '').toBe('ok');
    sim.configure({ mutator: { enabled: false, intervalMs: 100, perTick: 5 } });
    // The last changes must fall behind the window end of the final pass: the safety lag (2 s) plus
    // the 1 s resolution of the HTTP Date header the server clock is read from, plus a margin.
    // The server clock is moved that far forward instead of sleeping.
    ageChangesPastSafetyLag(sim);
    const final = await syncOnce(config, dir);
    expect(final[0]!.status, final[0]!.error ?? '').toBe('ok');

    const truth = await collectTruth(sim, 'loads');
    // The loopback sshd's remote folder is a local path: read exactly what an ERP would fetch.
    const rows = readCsvRows(remoteDir, 'loads');
    const cmp = compareWithTruth(truth, latestByKey(rows), (r) => String(r.reference_number));
    expect(truth.filter((r) => r.isDeleted === true).length).toBeGreaterThan(0);
    const explain = [...cmp.missing, ...cmp.stale, ...cmp.wrongOp].slice(0, 5).map((k) => ({
      key: k,
      truthUpdatedAt: truth.find((r) => String(r.reference_number) === k)?.updatedAt,
      versions: rows.filter((r) => r.record_key === k).map((r) => `${r._updated_at} ${r._op} synced ${r._synced_at}`),
    }));
    const counts = { missing: cmp.missing.length, stale: cmp.stale.length, wrongOp: cmp.wrongOp.length, phantom: cmp.phantom.length };
    expect(counts, JSON.stringify(explain)).toEqual({
      missing: 0,
      stale: 0,
      wrongOp: 0,
      phantom: 0,
    });
    const names = await readdir(remoteDir);
    expect(names.filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    // Every data file belongs to a batch with its manifest (written after the files).
    expect(names.filter((n) => n.endsWith('.csv')).every((n) => names.includes(`${n.replace(/^(\d{8}T\d{6}Z-\d{6,})-.*$/, '$1')}.manifest.json`))).toBe(true);
    console.info(`sftp pull scenario: ${LOADS} loads, ${names.length} remote files, ${truth.length} truth records, ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, 900_000);
});
