import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteLoad, uploadLoadDocument } from '../../src/api/endpoints/loads.js';
import { parseConfig } from '../../src/config/parse-config.js';
import type { FreightSyncConfig } from '../../src/config/types.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { freePort, startDaemon, webhookUrl, type RunningDaemon } from '../helpers/daemon-harness.js';
import { ageChangesPastSafetyLag, collectTruth, latestByKey, pullConfigRaw, readCsvRows, startSim, syncOnce, tempDir, withPullApp } from '../helpers/pull-harness.js';

const MAX_BYTES = 200_000;

/** A config whose only stream is documentFiles, files and rows in the csv connector `out` (dir/out). */
function documentsConfig(sim: SimulatorHandle, dir: string, raw: Record<string, unknown> = {}, streamSettings: Record<string, unknown> = {}): FreightSyncConfig {
  const config = pullConfigRaw({ sim, dir, streams: ['documentFiles'], raw, streamSettings }) as { sync: { streams: Record<string, Record<string, unknown>> } };
  config.sync.streams.documentFiles!.options = { filesTo: 'out', maxBytes: MAX_BYTES, retryDelay: 'PT0.01S' };
  return parseConfig(config, { source: 'test config', baseDir: dir });
}

function sha256File(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

async function liveLoads(sim: SimulatorHandle, count: number): Promise<string[]> {
  const loads = await collectTruth(sim, 'loads');
  return loads.filter((l) => l.isDeleted !== true).slice(-count).map((l) => String(l.reference_number));
}

describe('documentFiles: polled from the loads', () => {
  let sim: SimulatorHandle;
  let dir: string;
  let out: string;
  let config: FreightSyncConfig;
  let refs: string[];

  beforeAll(async () => {
    sim = await startSim({ loads: 300, seed: 15 });
    dir = tempDir('document-files');
    out = path.join(dir, 'out');
    config = documentsConfig(sim, dir);
    refs = await liveLoads(sim, 6);
  });

  afterAll(async () => {
    await sim?.close();
  });

  const sync = async () => {
    ageChangesPastSafetyLag(sim);
    const [summary] = await syncOnce(config, dir);
    return summary!;
  };
  const rows = () => latestByKey(readCsvRows(out, 'document_files'));

  it('stores the POD and BOL files with the simulator checksums, and sends the API token nowhere else', { timeout: 60_000 }, async () => {
    sim.addDocument(refs[0]!, 'Proof of Delivery');
    sim.addDocument(refs[1]!, 'Bill of Lading');
    sim.addDocument(refs[2]!, 'Proof of Delivery');
    sim.addDocument(refs[2]!, 'Bill of Lading', { bytes: 150_000 });
    const summary = await sync();
    expect(summary).toMatchObject({ stream: 'documentFiles', status: 'ok', delivered: 4, rejected: 0 });

    const truth = sim.documents();
    expect(truth).toHaveLength(4);
    const latest = rows();
    for (const doc of truth) {
      const file = path.join(out, 'documents', `${doc.sha256}.pdf`);
      expect(sha256File(file)).toBe(doc.sha256);
      expect(fs.statSync(file).size).toBe(doc.bytes);
      const row = latest.get(`${doc.reference_number}|${doc.type}|${doc.url}`);
      expect(row).toMatchObject({ sha256: doc.sha256, bytes: String(doc.bytes), file_name: `${doc.sha256}.pdf`, file_location: file, _op: 'upsert' });
    }
    // The files live on another origin than the API: no download carried the bearer token.
    expect(sim.stats()).toMatchObject({ documentDownloads: 4, documentDownloadsWithAuthorization: 0 });
    // Nothing was left half-written.
    expect(fs.readdirSync(path.join(out, 'documents')).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('downloads nothing again when the loads change but their documents do not', { timeout: 60_000 }, async () => {
    const before = sim.stats().documentDownloads;
    await sim.mutate(30);
    const summary = await sync();
    expect(summary).toMatchObject({ status: 'ok', delivered: 0 });
    expect(sim.stats().documentDownloads).toBe(before);
  });

  it('delivers a tombstone for a document removed from its load', { timeout: 60_000 }, async () => {
    const removed = sim.documents().find((d) => d.reference_number === refs[2] && d.type === 'Proof of Delivery')!;
    sim.removeDocument(refs[2]!, removed.url);
    const summary = await sync();
    expect(summary).toMatchObject({ status: 'ok', delivered: 1, deletes: 1 });
    const row = rows().get(`${removed.reference_number}|${removed.type}|${removed.url}`);
    expect(row).toMatchObject({ _op: 'delete', sha256: removed.sha256 });
    // The other document of that load stays.
    const other = sim.documents().find((d) => d.reference_number === refs[2] && d.type === 'Bill of Lading')!;
    expect(rows().get(`${other.reference_number}|${other.type}|${other.url}`)).toMatchObject({ _op: 'upsert' });
  });

  it('delivers a tombstone for every document of a deleted load', { timeout: 60_000 }, async () => {
    const docs = sim.documents().filter((d) => d.reference_number === refs[1] && !d.removed);
    expect(docs).toHaveLength(1);
    await withPullApp(config, dir, (app) => deleteLoad(app.client, docs[0]!.load_id));
    const summary = await sync();
    expect(summary).toMatchObject({ status: 'ok', deletes: 1 });
    expect(rows().get(`${docs[0]!.reference_number}|${docs[0]!.type}|${docs[0]!.url}`)).toMatchObject({ _op: 'delete', sha256: docs[0]!.sha256 });
  });

  it('stores the file of a document uploaded through the API', { timeout: 60_000 }, async () => {
    const uploaded = await withPullApp(config, dir, (app) =>
      uploadLoadDocument(app.client, { referenceNumber: refs[5]!, documentType: 'Proof of Delivery', fileName: 'pod scan.PDF', content: new Uint8Array(2_345) }),
    );
    const doc = sim.documents().find((d) => d.url === uploaded.url)!;
    expect(doc).toMatchObject({ bytes: 2_345 });
    const summary = await sync();
    expect(summary).toMatchObject({ status: 'ok', delivered: 1 });
    // The extension comes from the URL's file name, lower-cased.
    expect(sha256File(path.join(out, 'documents', `${doc.sha256}.pdf`))).toBe(doc.sha256);
  });

  it('retries a failing download with backoff and stores the file', { timeout: 60_000 }, async () => {
    const before = sim.stats().documentDownloads;
    sim.failDocumentDownloads(2);
    const doc = sim.addDocument(refs[3]!, 'Proof of Delivery');
    const summary = await sync();
    expect(summary).toMatchObject({ status: 'ok', delivered: 1 });
    expect(sim.stats().documentDownloads - before).toBe(3);
    expect(sha256File(path.join(out, 'documents', `${doc.sha256}.pdf`))).toBe(doc.sha256);
  });

  it('quarantines a file over maxBytes with the reason, and stores nothing of it', { timeout: 60_000 }, async () => {
    const big = sim.addDocument(refs[4]!, 'Bill of Lading', { bytes: MAX_BYTES + 1 });
    const summary = await sync();
    expect(summary).toMatchObject({ status: 'failed', delivered: 0, rejected: 1 });
    expect(fs.existsSync(path.join(out, 'documents', `${big.sha256}.pdf`))).toBe(false);
    expect(fs.readdirSync(path.join(out, 'documents')).filter((n) => n.startsWith('.'))).toEqual([]);
    const entries = await withPullApp(config, dir, (app) => app.db.selectFrom('quarantine').selectAll().where('stream', '=', 'documentFiles').execute());
    expect(entries).toHaveLength(1);
    expect(entries[0]!.item_key).toBe(`${big.reference_number}|${big.type}|${big.url}`);
    expect(entries[0]!.reason).toContain(`over the limit of ${MAX_BYTES} bytes`);
  });
});

describe('documentFiles: document#* events', () => {
  const SECRET = 'whsec-document-files-7e2a';
  let sim: SimulatorHandle;
  let daemon: RunningDaemon;
  let dir: string;

  beforeAll(async () => {
    sim = await startSim({ loads: 200, seed: 16, variant: 'brokerage' });
    dir = tempDir('document-files-webhooks');
    const config = documentsConfig(
      sim,
      dir,
      { webhooks: { enabled: true, listen: `127.0.0.1:${await freePort()}`, secret: SECRET, catchUpInterval: 'PT0S' }, http: { listen: `127.0.0.1:${await freePort()}` } },
      // Polling off (a yearly cron): whatever lands came through the events.
      { schedule: '0 0 1 1 *' },
    );
    daemon = await startDaemon(config, dir);
    sim.configure({ webhooks: { url: webhookUrl(config), secret: SECRET } });
  });

  afterAll(async () => {
    await daemon?.stop();
    await sim?.close();
  });

  it('stores the files of POD and BOL events with the simulator checksums', { timeout: 60_000 }, async () => {
    const [a, b] = await liveLoads(sim, 2);
    const pod = sim.addDocument(a!, 'Proof of Delivery');
    const bol = sim.addDocument(b!, 'Bill of Lading');
    await sim.webhooksIdle();
    const inbox = () => daemon.app.db.selectFrom('webhook_inbox').select(['event_type', 'state']).execute();
    for (let i = 0; (await inbox()).some((r) => r.state === 'pending'); i++) {
      if (i > 400) throw new Error('webhook events not processed');
      await new Promise((r) => setTimeout(r, 25));
    }
    expect((await inbox()).map((r) => [r.event_type, r.state]).sort()).toEqual([
      ['document#bo_added', 'done'],
      ['document#pod_added', 'done'],
    ]);
    const out = path.join(dir, 'out');
    for (const doc of [pod, bol]) expect(sha256File(path.join(out, 'documents', `${doc.sha256}.pdf`))).toBe(doc.sha256);
    const latest = latestByKey(readCsvRows(out, 'document_files'));
    expect([...latest.values()].map((r) => r.sha256).sort()).toEqual([pod.sha256, bol.sha256].sort());
    expect(sim.stats().documentDownloadsWithAuthorization).toBe(0);
  });
});
