import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localInboxOptionsSchema } from '../../connectors/inbox/index.js';
import { sftpOptionsSchema } from '../../connectors/sftp/index.js';
import { loadConfig } from '../../src/config/load-config.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const env = { FREIGHT_CLIENT_ID: 'example-client', FREIGHT_CLIENT_SECRET: 'example-secret', SFTP_HOST_KEY_SHA256: 'SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8' };

describe('config/examples/sftp.yaml', () => {
  it('validates, and its connector options pass the sftp and inbox schemas', async () => {
    const { config } = await loadConfig({ cwd: repoRoot, configPath: 'config/examples/sftp.yaml', env: { ...env } });
    const sftp = sftpOptionsSchema.parse(config.connectors.erp_sftp!.options);
    expect(sftp).toMatchObject({ host: 'sftp.erp.example.com', hostKeySha256: env.SFTP_HOST_KEY_SHA256, keepaliveInterval: 10_000, readyTimeout: 20_000, maxParallelTransfers: 2 });
    expect(sftp.reconnect).toEqual({ attempts: 5, baseDelay: 1000, maxDelay: 30_000 });
    expect(sftp.inbox).toMatchObject({ dir: '/erp/freight/requests', pattern: ['*.csv', '*.json'], readyWhen: 'stable' });
    expect(localInboxOptionsSchema.parse(config.connectors.manual_inbox!.options)).toMatchObject({ dir: './inbox', delimiter: ';' });
  });

  it('sftp options: strict, auth required, pin required unless explicitly waived, fingerprint format checked', () => {
    const base = { host: 'h', username: 'u', password: 'p', remoteDir: '/x', hostKeySha256: env.SFTP_HOST_KEY_SHA256 };
    expect(sftpOptionsSchema.safeParse(base).success).toBe(true);
    const issues = (input: Record<string, unknown>) => {
      const result = sftpOptionsSchema.safeParse(input);
      return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    };
    expect(issues({ ...base, hots: 'x' }).join()).toMatch(/hots/);
    expect(issues({ ...base, password: undefined })).toEqual(['password: give password, privateKey or privateKeyPath']);
    expect(issues({ ...base, hostKeySha256: undefined })[0]).toMatch(/^hostKeySha256: is required/);
    expect(issues({ ...base, hostKeySha256: undefined, allowUnpinnedHostKey: true })).toEqual([]);
    expect(issues({ ...base, hostKeySha256: 'aa:bb:cc' })[0]).toMatch(/^hostKeySha256: must look like SHA256:/);
    expect(issues({ ...base, remoteDir: undefined })).toEqual(['remoteDir: give remoteDir (drop records), inbox (read requests), or both']);
    expect(issues({ ...base, keepaliveInterval: 'ten seconds' })[0]).toMatch(/keepaliveInterval: "ten seconds" is not a duration/);
    expect(issues({ ...base, delimiter: '"' })).toEqual(['delimiter: must differ from quote']);
  });
});
