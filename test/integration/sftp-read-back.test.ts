import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SinkRow } from '../../src/contracts/index.js';
import { batchOf, record } from '../helpers/records.js';
import { requireService } from '../helpers/services.js';
import { createSftp, sftpOptions } from '../helpers/sftp-fixtures.js';
import { probeSshd, startSshd, type SshdHandle } from '../helpers/sshd.js';

const available = requireService('a real OpenSSH sshd on loopback', probeSshd());
const never = () => new AbortController().signal;

/** `reconcile` reads an SFTP drop back exactly like a local one: the latest version per key. */
describe.skipIf(!available)('sftp connector: read-back for reconcile', () => {
  let sshd: SshdHandle;
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  it('yields one row per key from the remote files: newest version, tombstones as _op delete', async () => {
    const sftp = await createSftp(sftpOptions(sshd, { remoteDir: path.join(sshd.root, 'read-back') }));
    try {
      const thing = (id: string, text: string, overrides: Parameters<typeof record>[3]) => record('things', id, { id, text, parts: [] }, overrides);
      await sftp.sink!.write(batchOf('things', 'b-1', [thing('1', 'old', { updatedAt: '2024-03-01T00:00:00Z' }), thing('2', 'two', {})]), never());
      await sftp.sink!.write(batchOf('things', 'b-2', [thing('1', 'new', { updatedAt: '2024-03-05T00:00:00Z', syncedAt: '2024-03-14T00:00:00.000Z' })]), never());
      await sftp.sink!.write(batchOf('things', 'b-3', [thing('2', 'two', { op: 'delete', syncedAt: '2024-03-15T00:00:00.000Z' })]), never());
      // Published at the end of the run; the reader sees published batches only.
      await sftp.sink!.flush!(never());
      const rows: SinkRow[] = [];
      for await (const page of sftp.reader!.readRows('things', {}, never())) rows.push(...page);
      const byId = new Map(rows.map((r) => [r.id, r]));
      expect([...byId.keys()].sort()).toEqual(['1', '2']);
      expect(byId.get('1')).toMatchObject({ text: 'new', _op: 'upsert' });
      expect(byId.get('2')).toMatchObject({ _op: 'delete' });
    } finally {
      await sftp.close();
    }
  });
});
