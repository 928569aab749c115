import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CommandSource, ConnectorContext, FileStore, ConnectorFactory, ConnectorInstance, RecordSink, SinkReader } from '../../src/contracts/index.js';
import { FileDropSink } from '../file-drop/drop-sink.js';
import { DropSinkReader, inPages } from '../file-drop/drop-reader.js';
import { TargetFileStore } from '../file-drop/file-store.js';
import { removeOrphanSpools } from '../file-drop/publish-spool.js';
import { removeStaleTempFiles } from '../file-drop/retention.js';
import { STAGING_DIR, STALE_TEMP_MS } from '../file-drop/index.js';
import { InboxSource } from '../file-inbox/inbox-source.js';
import { inboxFolders } from '../file-inbox/inbox-options.js';
import { SftpError } from './errors.js';
import { SftpSession } from './session.js';
import { SftpTarget } from './sftp-target.js';
import { sftpOptionsSchema, type SftpOptions } from './options.js';

export { sftpOptionsSchema, type SftpOptions, type SftpOptionsInput } from './options.js';
export { sha256Fingerprint, fingerprintsEqual } from './host-key.js';
export * from './errors.js';
export { SftpSession } from './session.js';
export { SftpTarget } from './sftp-target.js';

/**
 * The SFTP connector: the CSV drop of the `csv` connector written to a remote folder (sink, when
 * `remoteDir` is set), and/or a remote inbox of request files (source, when `inbox` is set).
 */
export const sftpConnector: ConnectorFactory<SftpOptions> = {
  name: 'sftp',
  configSchema: sftpOptionsSchema,
  capabilities: (options) => ({ sink: options.remoteDir !== undefined, source: options.inbox !== undefined }),
  create(options: SftpOptions, context: ConnectorContext): ConnectorInstance {
    const logger = context.logger.child({ connector: context.instanceName, type: 'sftp' });
    const session = new SftpSession(
      {
        host: options.host,
        port: options.port,
        username: options.username,
        password: options.password,
        // A key pasted into an env var often arrives with literal "\n" instead of line breaks.
        privateKey: options.privateKey && !options.privateKey.includes('\n') ? options.privateKey.replace(/\\n/g, '\n') : options.privateKey,
        passphrase: options.passphrase,
        hostKeySha256: options.hostKeySha256,
        allowUnpinnedHostKey: options.allowUnpinnedHostKey,
        keepaliveInterval: options.keepaliveInterval,
        readyTimeout: options.readyTimeout,
        reconnect: options.reconnect,
      },
      logger,
    );
    const target = new SftpTarget(session, options.maxParallelTransfers, logger);
    const remoteDir = options.remoteDir;
    const drop = remoteDir ? new FileDropSink({ target, directory: remoteDir, options, mappings: context.mappings, logger, ...(context.writerFence ? { lock: { fence: context.writerFence } } : {}) }) : undefined;
    const folders = options.inbox ? inboxFolders(options.inbox, (dir) => dir, path.posix.join) : undefined;
    const inbox = options.inbox && folders ? new InboxSource({ target, folders, options: options.inbox, logger, parallel: options.maxParallelTransfers }) : undefined;

    // Every step is idempotent, so a step interrupted by a broken connection is simply redone.
    const sink: RecordSink | undefined = drop && {
      write: (batch, signal) => session.run(() => drop.write(batch, signal), signal),
      flush: (signal) => session.run(() => drop.flush(signal), signal),
    };
    const dropReader = remoteDir ? new DropSinkReader({ target, directory: remoteDir, options, mappings: context.mappings }) : undefined;
    // Read whole inside one session run (a broken connection redoes the read), then paged out.
    const reader: SinkReader | undefined = dropReader && {
      async *readRows(stream, _options, signal) {
        yield* inPages(await session.run(() => dropReader.latestRows(stream, signal), signal));
      },
    };
    // A put interrupted by a broken connection is redone whole: `open` downloads the bytes again.
    const store = remoteDir ? new TargetFileStore(target, remoteDir) : undefined;
    const files: FileStore | undefined = store && { put: (file, signal) => session.run(() => store.put(file, signal), signal) };
    const source: CommandSource | undefined = inbox && {
      take: (signal) => session.run(() => inbox.take(signal), signal),
      accepted: (unit, signal) => session.run(() => inbox.accepted(unit, signal), signal),
      writeBack: (unitId, results, signal) => session.run(() => inbox.writeBack(unitId, results, signal), signal),
      peek: (signal) => session.run(() => inbox.peek(signal), signal),
      writeDryRun: (unitId, results, signal) => session.run(() => inbox.writeDryRun(unitId, results, signal), signal),
    };

    return {
      sink,
      source,
      reader,
      files,
      async init(signal) {
        if (options.privateKeyPath) {
          const file = path.resolve(context.baseDir, options.privateKeyPath);
          try {
            session.setPrivateKey(await readFile(file));
          } catch (error) {
            throw new SftpError('SFTP_KEY_FILE', `sftp ${session.server}: cannot read privateKeyPath ${file}: ${(error as Error).message}`, { cause: error });
          }
        }
        if (remoteDir) {
          // A process killed while it published left its local spool of a batch behind.
          const orphans = await removeOrphanSpools();
          if (orphans.length > 0) logger.warn({ removed: orphans }, 'removed local spool folders left by a process killed while it published');
        }
        await session.run(async () => {
          if (remoteDir) {
            await target.ensureDir(remoteDir, signal);
            for (const dir of [remoteDir, target.join(remoteDir, STAGING_DIR)]) {
              if (!(await target.exists(dir))) continue;
              const removed = await removeStaleTempFiles(target, dir, STALE_TEMP_MS);
              if (removed.length > 0) logger.warn({ directory: target.describe(dir), removed }, 'removed temp files left by an earlier crash');
            }
            // Batches staged before a crash were acknowledged: publish them before anything new.
            await drop?.recover();
          }
          await inbox?.prepare(signal);
        }, signal);
      },
      async check(signal) {
        const dir = remoteDir ?? folders!.dir;
        await session.run(() => target.list(dir), signal);
      },
      async close() {
        try {
          if (drop) await session.run(() => drop.close(), new AbortController().signal);
        } catch (error) {
          // Durable in the staging folder: published at the next start.
          logger.warn({ err: error, directory: target.describe(remoteDir!) }, 'could not publish the open batch at close; it is published at the next start');
        }
        await session.close();
      },
    };
  },
};

export default sftpConnector;
