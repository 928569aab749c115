import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { FileTarget } from '../../connectors/file-drop/file-target.js';
import { LocalTarget } from '../../connectors/file-drop/local-target.js';
import { sftpOptionsSchema } from '../../connectors/sftp/options.js';
import { SftpSession } from '../../connectors/sftp/session.js';
import { SftpTarget } from '../../connectors/sftp/sftp-target.js';
import { silentLogger } from '../../src/util/logger.js';
import { sftpOptions } from './sftp-fixtures.js';
import { startSshd, type SshdHandle } from './sshd.js';

/**
 * Where a drop test's writers write: a folder for the drop (`base`), and each writer's own
 * connection to it (`target`) — a local folder, or a real sshd on loopback.
 */
export interface DropTargets {
  base: () => Promise<string>;
  target: () => FileTarget;
}

/** Local folders under the test run's temporary root. */
export function localDropTargets(prefix: string): DropTargets {
  return { base: () => mkdtemp(path.join(os.tmpdir(), `${prefix}-`)), target: () => new LocalTarget() };
}

/**
 * SFTP to a real sshd started for the enclosing `describe` (call it there) and stopped after it,
 * with every session it opened. The loopback sshd's paths are local ones: a test reads what was
 * published directly.
 */
export function sftpDropTargets(prefix: string): () => DropTargets {
  let sshd: SshdHandle | undefined;
  const sessions: SftpSession[] = [];
  let round = 0;
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    for (const session of sessions) await session.close();
    await sshd?.stop();
  });
  return () => ({
    // The sink creates the folder.
    base: async () => path.join(sshd!.root, `${prefix}-${process.pid}-${++round}`),
    target: () => {
      const options = sftpOptionsSchema.parse(sftpOptions(sshd!, { remoteDir: sshd!.root }));
      const session = new SftpSession(options, silentLogger());
      sessions.push(session);
      return new SftpTarget(session, options.maxParallelTransfers, silentLogger());
    },
  });
}
