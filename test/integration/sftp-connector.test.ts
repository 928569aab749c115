import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostKeyMismatchError, SftpAuthError, sftpOptionsSchema } from '../../connectors/sftp/index.js';
import type { ConnectorInstance, RecordBatch } from '../../src/contracts/index.js';
import { batchOf, record } from '../helpers/records.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { requireService } from '../helpers/services.js';
import { fingerprintOf, probeSshd, startSshd, type SshdHandle } from '../helpers/sshd.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { createSftp, sftpOptions } from '../helpers/sftp-fixtures.js';

const available = requireService('a real OpenSSH sshd on loopback', probeSshd());

const thing = (id: string, extra: Record<string, unknown> = {}) => record('things', id, { id, text: `t${id}`, parts: [{ name: 'a' }, { name: 'b' }], ...extra });
const rows = (buffer: Buffer | string) => parse(buffer, { columns: true, bom: true }) as Record<string, string>[];
const never = () => new AbortController().signal;
/** One write, published at once (as at the end of a run). */
const publish = async (instance: ConnectorInstance, batch: RecordBatch) => {
  await instance.sink!.write(batch, never());
  await instance.sink!.flush!(never());
};
/** `20261122T203816Z-000001-things.csv` → `000001-things.csv`: names without their time. */
const untimed = (names: readonly string[]) => names.map((n) => n.replace(/^\d{8}T\d{6}Z-/, ''));

/** A batch of ~`mb` MB, so an upload takes long enough to be interrupted. */
const bigBatch = (id: string, mb: number) =>
  batchOf('things', id, Array.from({ length: mb * 100 }, (_, i) => thing(String(i), { text: `${i}-${'x'.repeat(10_000)}` })));

describe.skipIf(!available)('sftp connector against a real sshd', () => {
  let sshd: SshdHandle;
  const open: ConnectorInstance[] = [];
  const track = (instance: ConnectorInstance) => (open.push(instance), instance);
  let n = 0;
  const fresh = () => path.join(sshd.root, `case-${++n}`);
  /** Published entries (the hidden staging folder aside). */
  const list = async (dir: string) => (await readdir(dir)).filter((n) => n !== '.staging').sort();
  // The writer lock (held while a batch is open) is not a staged page.
  const staged = async (dir: string) => (existsSync(path.join(dir, '.staging')) ? (await readdir(path.join(dir, '.staging'))).filter((n) => n !== 'writer.lock').sort() : []);
  const file = async (dir: string, suffix: string) => path.join(dir, (await list(dir)).find((n) => n.endsWith(suffix))!);

  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    for (const instance of open) await instance.close();
    await sshd?.stop();
  });

  it('creates the remote folder, stages pages, then publishes one file per table and the marker last', async () => {
    const dir = path.join(fresh(), 'nested', 'drop');
    const sftp = track(await createSftp(sftpOptions(sshd, { remoteDir: dir, marker: 'done' })));
    await sftp.sink!.write(batchOf('things', 'b-1', [thing('1'), thing('2')]), never());
    await sftp.sink!.write(batchOf('things', 'b-2', [thing('1', { text: 'changed' })]), never());
    expect(await list(dir)).toEqual([]);
    expect(untimed(await staged(dir))).toEqual(['000001.000001.page', '000001.000002.page']);
    await sftp.sink!.flush!(never());
    expect(untimed(await list(dir))).toEqual(['000001-thing_parts.csv', '000001-things.csv', '000001.done']);
    expect(await staged(dir)).toEqual([]);
    const text = await readFile(await file(dir, '-things.csv'), 'utf8');
    expect(text.startsWith('id,text,_op,_updated_at,_synced_at,_run_id\r\n')).toBe(true);
    expect(rows(text)).toEqual([expect.objectContaining({ id: '1', text: 't1' }), expect.objectContaining({ id: '2' }), expect.objectContaining({ id: '1', text: 'changed', _op: 'upsert' })]);
    expect(rows(await readFile(await file(dir, '-thing_parts.csv'))).map((r) => r.part)).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
  });

  it('publishes a batch of several pages and tables with one transfer at a time (pages spooled locally, never read inside an upload)', async () => {
    const dir = fresh();
    const sftp = track(await createSftp(sftpOptions(sshd, { remoteDir: dir, maxParallelTransfers: 1 })));
    for (const i of [1, 2, 3]) await sftp.sink!.write(batchOf('things', `p-${i}`, [thing(String(i)), thing(String(i + 10))]), never());
    await sftp.sink!.flush!(never());
    expect(untimed(await list(dir))).toEqual(['000001-thing_parts.csv', '000001-things.csv', '000001.manifest.json']);
    expect(await staged(dir)).toEqual([]);
    const things = await readFile(await file(dir, '-things.csv'));
    expect(things.toString('utf8').match(/^id,/gm)).toHaveLength(1);
    expect(rows(things).map((r) => r.id)).toEqual(['1', '11', '2', '12', '3', '13']);
    const manifest = JSON.parse(await readFile(await file(dir, '.manifest.json'), 'utf8'));
    expect(manifest.files).toContainEqual(expect.objectContaining({ table: 'things', rows: 6, bytes: things.length, sha256: createHash('sha256').update(things).digest('hex') }));
    expect(manifest.files).toContainEqual(expect.objectContaining({ table: 'thing_parts', rows: 12 }));
  });

  it('publishes at close, and a batch left staged on the server (kill -9) at the next start', async () => {
    const dir = fresh();
    const first = await createSftp(sftpOptions(sshd, { remoteDir: dir }));
    await first.sink!.write(batchOf('things', 'c', [thing('1')]), never());
    await first.close();
    expect(untimed(await list(dir))).toEqual(['000001-thing_parts.csv', '000001-things.csv', '000001.manifest.json']);

    const killed = track(await createSftp(sftpOptions(sshd, { remoteDir: dir })));
    await killed.sink!.write(batchOf('things', 'k', [thing('2')]), never());
    expect(untimed(await staged(dir))).toEqual(['000002.000001.page']);
    // No flush, no close: the next instance finds the page and publishes it at init. The killed
    // writer's lock stays behind naming a process that no longer runs: taken over.
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(path.join(dir, '.staging', 'writer.lock'), JSON.stringify({ host: hostname(), pid: deadPid, token: 'killed', at: new Date().toISOString() }));
    track(await createSftp(sftpOptions(sshd, { remoteDir: dir })));
    expect(untimed(await list(dir)).slice(3)).toEqual(['000002-thing_parts.csv', '000002-things.csv', '000002.manifest.json']);
    expect(rows(await readFile(await file(dir, '000002-things.csv'))).map((r) => r.id)).toEqual(['2']);
  });

  it('writes the same bytes as the csv connector would (shared format options)', async () => {
    const dir = fresh();
    const sftp = track(await createSftp(sftpOptions(sshd, { remoteDir: dir, delimiter: ';', lineEnding: 'lf', bom: true, marker: 'manifest' })));
    await publish(sftp, batchOf('things', 'fmt', [thing('1', { text: 'a;b "q"' })]));
    const thingsFile = await file(dir, '-things.csv');
    const bytes = await readFile(thingsFile);
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(bytes.toString('utf8')).toContain('1;"a;b ""q"""');
    const manifest = JSON.parse(await readFile(await file(dir, '.manifest.json'), 'utf8'));
    expect(manifest.files).toContainEqual(expect.objectContaining({ file: path.basename(thingsFile), rows: 1, bytes: bytes.length }));
  });

  it('refuses a server whose host key is not the pinned one, naming host and both fingerprints', async () => {
    const wrong = await fingerprintOf(`${sshd.strangerKeyPath}.pub`);
    const started = Date.now();
    const error = await createSftp(sftpOptions(sshd, { remoteDir: fresh(), hostKeySha256: wrong, reconnect: { attempts: 5, baseDelay: 1000 } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostKeyMismatchError);
    const message = (error as Error).message;
    expect(message).toContain(`${sshd.host}:${sshd.port}`);
    expect(message).toContain(wrong);
    expect(message).toContain(sshd.hostKeySha256);
    // Never retried: five reconnect attempts with 1 s base delay would take seconds.
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('requires a pinned host key unless allowUnpinnedHostKey is set, and then warns on every connect', async () => {
    const { hostKeySha256: _pinned, ...unpinned } = sftpOptions(sshd, { remoteDir: fresh() });
    const refused = sftpOptionsSchema.safeParse(unpinned);
    expect(refused.success).toBe(false);
    expect(JSON.stringify(refused.error?.issues)).toContain('hostKeySha256');

    const { logger, text } = capturingLogger('info');
    const sftp = track(await createSftp({ ...unpinned, allowUnpinnedHostKey: true }, { logger }));
    await sftp.check!(never());
    expect(text()).toContain('SFTP HOST KEY NOT VERIFIED');
    expect(text()).toContain(sshd.hostKeySha256);
  });

  it('refuses a wrong password without retrying, and never logs the password', async () => {
    const { logger, text } = capturingLogger('trace');
    const started = Date.now();
    const error = await createSftp(sftpOptions(sshd, { remoteDir: fresh(), password: 'not-the-password', reconnect: { attempts: 5, baseDelay: 1000 } }), { logger }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SftpAuthError);
    expect((error as Error).message).toContain(`${sshd.username}@${sshd.host}:${sshd.port}`);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(text()).not.toContain('not-the-password');
  });

  it('authenticates with a key file, an inline key (also with literal \\n from an env var), and a passphrase-protected key', async () => {
    const base = sftpOptions(sshd, { remoteDir: fresh() });
    delete base.password;
    const fromFile = track(await createSftp({ ...base, privateKeyPath: sshd.privateKeyPath }));
    await publish(fromFile, batchOf('things', 'k1', [thing('1')]));
    const inline = track(await createSftp({ ...base, privateKey: sshd.privateKey.replace(/\n/g, '\\n') }));
    await publish(inline, batchOf('things', 'k2', [thing('1')]));
    const encrypted = track(await createSftp({ ...base, privateKeyPath: sshd.encryptedKeyPath, passphrase: sshd.passphrase }));
    await publish(encrypted, batchOf('things', 'k3', [thing('1')]));
    expect(untimed((await list(base.remoteDir!)).filter((f) => f.endsWith('-things.csv')))).toEqual(['000001-things.csv', '000002-things.csv', '000003-things.csv']);

    await expect(createSftp({ ...base, privateKeyPath: sshd.strangerKeyPath })).rejects.toBeInstanceOf(SftpAuthError);
  });

  it('an upload aborted mid-transfer leaves nothing under the final name (and removes its temp file)', async () => {
    const dir = fresh();
    const sftp = track(await createSftp(sftpOptions(sshd, { remoteDir: dir })));
    const controller = new AbortController();
    const pending = sftp.sink!.write(bigBatch('big', 40), controller.signal);
    // Abort once the temp file has started to grow on the server.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const temps = (await staged(dir)).filter((f) => f.startsWith('.tmp-'));
      if (temps.length > 0) break;
      if (Date.now() > deadline) throw new Error('upload never started');
      await new Promise((r) => setTimeout(r, 5));
    }
    controller.abort(new Error('shutdown requested'));
    await expect(pending).rejects.toThrow('shutdown requested');
    expect(await staged(dir)).toEqual([]);
    await sftp.sink!.flush!(never());
    expect(await list(dir)).toEqual([]);
  });

  it('a connection cut mid-upload leaves nothing under the final name; with reconnects the batch is redone whole', async () => {
    const proxy = await startTcpProxy(sshd.port);
    try {
      const dir = fresh();
      const cutWhenUploading = async () => {
        const start = proxy.uploaded();
        while (proxy.uploaded() - start < 2_000_000) await new Promise((r) => setTimeout(r, 2));
        proxy.cut();
      };
      const noRetry = track(await createSftp(sftpOptions(sshd, { port: proxy.port, remoteDir: dir })));
      const failing = noRetry.sink!.write(bigBatch('cut', 30), never());
      await cutWhenUploading();
      await expect(failing).rejects.toThrow(/sftp .*127\.0\.0\.1/);
      expect((await staged(dir)).filter((f) => !f.startsWith('.tmp-'))).toEqual([]);
      expect(await list(dir)).toEqual([]);
      // One writer per drop at a time: the failed sink lets go of it when closed.
      await noRetry.close();

      const retrying = track(await createSftp(sftpOptions(sshd, { port: proxy.port, remoteDir: dir, reconnect: { attempts: 3, baseDelay: 50 } })));
      const batch = bigBatch('cut', 30);
      const redone = retrying.sink!.write(batch, never());
      await cutWhenUploading();
      await redone;
      await retrying.sink!.flush!(never());
      expect(rows(await readFile(await file(dir, '-things.csv')))).toHaveLength(batch.records.length);
      expect(untimed((await list(dir)).filter((f) => !f.startsWith('.tmp-')))).toEqual(['000001-thing_parts.csv', '000001-things.csv', '000001.manifest.json']);
    } finally {
      await proxy.close();
    }
  });

  it('applies retention on the remote side (whole old batches, marker included)', async () => {
    const dir = fresh();
    const options = sftpOptions(sshd, { remoteDir: dir, marker: 'done', retention: { maxAgeDays: 7 } });
    await publish(track(await createSftp(options)), batchOf('things', 'old', [thing('1')]));
    const old = new Date(Date.now() - 10 * 86_400_000);
    for (const name of await list(dir)) await utimes(path.join(dir, name), old, old);
    // By age, retention runs at a sink's first publish and then at most once a minute: a restarted sink meets the aged batch.
    await publish(track(await createSftp(options)), batchOf('things', 'new', [thing('2')]));
    expect(untimed(await list(dir))).toEqual(['000002-thing_parts.csv', '000002-things.csv', '000002.done']);
  });

  it('reports an unwritable remote folder with a typed error naming server and path', async () => {
    const sftp = createSftp(sftpOptions(sshd, { remoteDir: '/root/forbidden/drop' }));
    await expect(sftp).rejects.toThrow(/sftp freightsftp@127\.0\.0\.1:\d+: (stat|mkdir) sftp:\/\/freightsftp@127\.0\.0\.1:\d+\/root\/forbidden\/drop failed: .*Permission denied/);
  });
});
