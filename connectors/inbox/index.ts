import { access } from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';
import type { ConnectorContext, ConnectorFactory, ConnectorInstance } from '../../src/contracts/index.js';
import { LocalTarget } from '../file-drop/local-target.js';
import { removeStaleTempFiles } from '../file-drop/retention.js';
import { STALE_TEMP_MS } from '../file-drop/index.js';
import { InboxSource } from '../file-inbox/inbox-source.js';
import { inboxFolders } from '../file-inbox/inbox-options.js';
import { localInboxOptionsSchema, type LocalInboxOptions } from './options.js';

export { localInboxOptionsSchema, type LocalInboxOptions, type LocalInboxOptionsInput } from './options.js';

/**
 * The local inbox connector: a folder the ERP drops CSV or JSON request files into, read as
 * outbound commands (a source only). Same behaviour as the `sftp` connector's inbox.
 */
export const inboxConnector: ConnectorFactory<LocalInboxOptions> = {
  name: 'inbox',
  configSchema: localInboxOptionsSchema,
  capabilities: () => ({ sink: false, source: true }),
  create(options: LocalInboxOptions, context: ConnectorContext): ConnectorInstance {
    const target = new LocalTarget();
    const folders = inboxFolders(options, (dir) => path.resolve(context.baseDir, dir), path.join);
    const logger = context.logger.child({ connector: context.instanceName, type: 'inbox' });
    const source = new InboxSource({ target, folders, options, logger });
    return {
      source,
      async init(signal) {
        await source.prepare(signal);
        // Result files are written through temp files too; a crash can leave one behind.
        for (const dir of [folders.processed, folders.failed]) {
          const removed = await removeStaleTempFiles(target, dir, STALE_TEMP_MS);
          if (removed.length > 0) logger.warn({ directory: dir, removed }, 'removed temp files left by an earlier crash');
        }
      },
      async check() {
        await access(folders.dir, constants.R_OK | constants.W_OK);
      },
      async close() {
        // Nothing held open between polls.
      },
    };
  },
};

export default inboxConnector;
