import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse-config.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { ageChangesPastSafetyLag, collectTruth, latestByKey, pullConfigRaw, readCsvRows, startSim, syncOnce, tempDir } from '../helpers/pull-harness.js';
import { requireService } from '../helpers/services.js';
import { sftpOptions } from '../helpers/sftp-fixtures.js';
import { probeSshd, startSshd, type SshdHandle } from '../helpers/sshd.js';

const available = requireService('a real OpenSSH sshd on loopback', probeSshd());

/** documentFiles storing into an SFTP directory of the loopback sshd (readable locally too). */
describe.skipIf(!available)('documentFiles into SFTP', () => {
  let sshd: SshdHandle;
  let sim: SimulatorHandle;

  beforeAll(async () => {
    sshd = await startSshd();
    sim = await startSim({ loads: 200, seed: 17 });
  });
  afterAll(async () => {
    await sim?.close();
    await sshd?.stop();
  });

  it('streams each file to the remote folder under its sha256 name, bytes equal to the simulator', { timeout: 120_000 }, async () => {
    const dir = tempDir('document-files-sftp');
    const remoteDir = path.join(sshd.root, `docs-${Date.now()}`);
    const raw = pullConfigRaw({ sim, dir, streams: ['documentFiles'] }) as Record<string, any>;
    raw.connectors.docs = { type: 'sftp', options: sftpOptions(sshd, { remoteDir }) };
    raw.sync.streams.documentFiles.options = { filesTo: 'docs', folder: 'files/pod' };
    const config = parseConfig(raw, { source: 'test config', baseDir: dir });

    const loads = (await collectTruth(sim, 'loads')).filter((l) => l.isDeleted !== true).slice(-2);
    // A multi-megabyte file: many SFTP write windows at increasing offsets.
    const big = sim.addDocument(String(loads[0]!.reference_number), 'Proof of Delivery', { bytes: 3 * 1024 * 1024 + 7 });
    const small = sim.addDocument(String(loads[1]!.reference_number), 'Bill of Lading');
    ageChangesPastSafetyLag(sim);
    const [summary] = await syncOnce(config, dir);
    expect(summary).toMatchObject({ status: 'ok', delivered: 2 });

    const latest = latestByKey(readCsvRows(path.join(dir, 'out'), 'document_files'));
    for (const doc of [big, small]) {
      const file = path.join(remoteDir, 'files', 'pod', `${doc.sha256}.pdf`);
      expect(createHash('sha256').update(fs.readFileSync(file)).digest('hex')).toBe(doc.sha256);
      const row = latest.get(`${doc.reference_number}|${doc.type}|${doc.url}`)!;
      expect(row.file_location).toBe(`sftp://${sshd.username}@${sshd.host}:${sshd.port}${file}`);
    }
    expect(fs.readdirSync(path.join(remoteDir, 'files', 'pod')).sort()).toEqual([`${big.sha256}.pdf`, `${small.sha256}.pdf`].sort());
  });
});
