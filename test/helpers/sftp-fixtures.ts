import { sftpConnector, sftpOptionsSchema, type SftpOptionsInput } from '../../connectors/sftp/index.js';
import type { ConnectorInstance } from '../../src/contracts/index.js';
import type { StreamMapping } from '../../src/mapping/index.js';
import { silentLogger, type Logger } from '../../src/util/logger.js';
import type { SshdHandle } from './sshd.js';
import { mappersOf } from './mappers.js';

import { thingsMapping } from './mappers.js';

export { thingsMapping };

/** Options for the loopback sshd: pinned host key, password auth, fast reconnects. */
export function sftpOptions(sshd: SshdHandle, overrides: Partial<SftpOptionsInput> = {}): SftpOptionsInput {
  return {
    host: sshd.host,
    port: sshd.port,
    username: sshd.username,
    password: sshd.password,
    hostKeySha256: sshd.hostKeySha256,
    readyTimeout: 5000,
    reconnect: { attempts: 0, baseDelay: 50, maxDelay: 200 },
    ...overrides,
  };
}

export async function createSftp(
  options: SftpOptionsInput,
  extra: { logger?: Logger; mappings?: [string, StreamMapping][]; init?: boolean } = {},
): Promise<ConnectorInstance> {
  const config = sftpOptionsSchema.parse(options);
  const instance = await sftpConnector.create(config, {
    instanceName: 'erp_sftp',
    logger: extra.logger ?? silentLogger(),
    baseDir: process.cwd(),
    mappings: mappersOf(extra.mappings ?? [['things', thingsMapping]]),
  });
  if (extra.init !== false) {
    try {
      await instance.init?.(new AbortController().signal);
    } catch (error) {
      await instance.close();
      throw error;
    }
  }
  return instance;
}
