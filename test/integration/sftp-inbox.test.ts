import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectorInstance } from '../../src/contracts/index.js';
import { inboxContract } from '../helpers/inbox-contract.js';
import { requireService } from '../helpers/services.js';
import { probeSshd, startSshd, type SshdHandle } from '../helpers/sshd.js';
import { createSftp, sftpOptions } from '../helpers/sftp-fixtures.js';

const available = requireService('a real OpenSSH sshd on loopback', probeSshd());

describe.skipIf(!available)('sftp connector as a source: remote inbox', () => {
  let sshd: SshdHandle;
  const open: ConnectorInstance[] = [];
  let n = 0;

  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    for (const instance of open) await instance.close();
    await sshd?.stop();
  });

  async function setup() {
    const dir = path.join(sshd.root, `inbox-${++n}`);
    const instance = await createSftp(sftpOptions(sshd, { inbox: { dir, pattern: ['*.csv', '*.json', '*.jsonl'] } }));
    open.push(instance);
    return { source: instance.source!, dir };
  }

  inboxContract(setup);

  it('is a source only when no remoteDir is given', async () => {
    const instance = await createSftp(sftpOptions(sshd, { inbox: { dir: path.join(sshd.root, 'only-inbox') } }));
    open.push(instance);
    expect(instance.sink).toBeUndefined();
    expect(instance.source).toBeDefined();
  });
});
