import { existsSync } from 'node:fs';
import { readdir, readFile, utimes } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostKeyMismatchError, SftpAuthError, sftpOptionsSchema } from '../../connectors/sftp/index.js';
import type { ConnectorInstance } from '../../src/contracts/index.js';
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

/** A batch of ~`mb` MB, so an upload takes long enough to be interrupted. */
const bigBatch = (id: string, mb: number) =>
  batchOf('things', id, Array.from({ length: mb * 100 }, (_, i) => thing(String(i), { text: `${i}-${'x'.repeat(10_000)}` })));

describe.skipIf(!available)('sftp connector against a real sshd', () => {
  let sshd: SshdHandle;
  const open: ConnectorInstance[] = [];
  const track = (instance: ConnectorInstance) => (open.push(instance), instance);
  let n = 0;
  const fresh = () => path.join(sshd.root, `case-${++n}`);
  const list = async (dir: string) => (await readdir(dir)).sort();

  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    for (const instance of open) await instance.close();
    await sshd?.stop();
  });

  it('creates the remote folder, uploads one file per table, and a repeated batch replaces its files', async () => {
    const dir = path.join(fresh(), 'nested', 'drop');
    const sftp = track(await createSftp(sftpOptions(sshd, { remoteDir: dir, marker: 'done' })));
    await sftp.sink!.write(batchOf('things', 'b-1', [thing('1'), thing('2')]), never());
    await sftp.sink!.write(batchOf('things', 'b-1', [thing('1', { text: 'changed' })]), never());
    expect(await list(dir)).toEqual(['thing_parts__b-1.csv', 'thing_parts__b-1.csv.done', 'things__b-1.csv', 'things__b-1.csv.done']);
    const text = await readFile(path.join(dir, 'things__b-1.csv'), 'utf8');
    expect(text.startsWith('id,text,_op,_updated_at,_synced_at,_run_id\r\n')).toBe(true);
    expect(rows(text)).toEqual([expect.objectContaining({ id: '1', text: 'changed', _op: 'upsert' })]);
    expect(rows(await readFile(path.join(dir, 'thing_parts__b-1.csv'))).map((r) => r.part)).toEqual(['a', 'b']);
  });

  it('writes the same bytes as the csv connector would (shared format options)', async () => {
    const dir = fresh();
    const sftp = track(await createSftp(sftpOptions(sshd, { remoteDir: dir, delimiter: ';', lineEnding: 'lf', bom: true, marker: 'manifest' })));
    await sftp.sink!.write(batchOf('things', 'fmt', [thing('1', { text: 'a;b "q"' })]), never());
    const bytes = await readFile(path.join(dir, 'things__fmt.csv'));
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(bytes.toString('utf8')).toContain('1;"a;b ""q"""');
    const manifest = JSON.parse(await readFile(path.join(dir, 'things__fmt.csv.manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ file: 'things__fmt.csv', rows: 1, bytes: bytes.length });
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
    await fromFile.sink!.write(batchOf('things', 'k1', [thing('1')]), never());
    const inline = track(await createSftp({ ...base, privateKey: sshd.privateKey.replace(/\n/g, '\\n') }));
    await inline.sink!.write(batchOf('things', 'k2', [thing('1')]), never());
    const encrypted = track(await createSftp({ ...base, privateKeyPath: sshd.encryptedKeyPath, passphrase: sshd.passphrase }));
    await encrypted.sink!.write(batchOf('things', 'k3', [thing('1')]), never());
    expect((await list(base.remoteDir!)).filter((f) => f.startsWith('things__'))).toEqual(['things__k1.csv', 'things__k2.csv', 'things__k3.csv']);

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
      const temps = (await readdir(dir)).filter((f) => f.startsWith('.tmp-things__big.csv-'));
      if (temps.length > 0) break;
      if (Date.now() > deadline) throw new Error('upload never started');
      await new Promise((r) => setTimeout(r, 5));
    }
    controller.abort(new Error('shutdown requested'));
    await expect(pending).rejects.toThrow('shutdown requested');
    expect(existsSync(path.join(dir, 'things__big.csv'))).toBe(false);
    expect(existsSync(path.join(dir, 'thing_parts__big.csv'))).toBe(false);
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
      expect((await list(dir)).filter((f) => !f.startsWith('.tmp-'))).toEqual([]);

      const retrying = track(await createSftp(sftpOptions(sshd, { port: proxy.port, remoteDir: dir, reconnect: { attempts: 3, baseDelay: 50 } })));
      const batch = bigBatch('cut', 30);
      const redone = retrying.sink!.write(batch, never());
      await cutWhenUploading();
      await redone;
      expect(rows(await readFile(path.join(dir, 'things__cut.csv')))).toHaveLength(batch.records.length);
      expect((await list(dir)).filter((f) => !f.startsWith('.tmp-'))).toEqual(['thing_parts__cut.csv', 'things__cut.csv']);
    } finally {
      await proxy.close();
    }
  });

  it('applies retention on the remote side (by age, with markers; temp files and other files untouched)', async () => {
    const dir = fresh();
    const sftp = track(await createSftp(sftpOptions(sshd, { remoteDir: dir, marker: 'done', retention: { maxAgeDays: 7 } })));
    await sftp.sink!.write(batchOf('things', 'old', [thing('1')]), never());
    const old = new Date(Date.now() - 10 * 86_400_000);
    for (const name of await list(dir)) await utimes(path.join(dir, name), old, old);
    await sftp.sink!.write(batchOf('things', 'new', [thing('2')]), never());
    expect(await list(dir)).toEqual(['thing_parts__new.csv', 'thing_parts__new.csv.done', 'things__new.csv', 'things__new.csv.done']);
  });

  it('reports an unwritable remote folder with a typed error naming server and path', async () => {
    const sftp = createSftp(sftpOptions(sshd, { remoteDir: '/root/forbidden/drop' }));
    await expect(sftp).rejects.toThrow(/sftp freightsftp@127\.0\.0\.1:\d+: (stat|mkdir) sftp:\/\/freightsftp@127\.0\.0\.1:\d+\/root\/forbidden\/drop failed: .*Permission denied/);
  });
});
