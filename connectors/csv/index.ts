import { access, mkdir } from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';
import type { ConnectorContext, ConnectorFactory, ConnectorInstance } from '../../src/contracts/index.js';
import { LocalTarget } from '../file-drop/local-target.js';
import { removeStaleTempFiles } from '../file-drop/retention.js';
import { STAGING_DIR, STALE_TEMP_MS } from '../file-drop/index.js';
import { DropSinkReader } from '../file-drop/drop-reader.js';
import { TargetFileStore } from '../file-drop/file-store.js';
import { CsvSink } from './csv-sink.js';
import { csvOptionsSchema, type CsvOptions } from './options.js';

export { csvOptionsSchema, type CsvOptions, type CsvOptionsInput } from './options.js';
export { CsvSink } from './csv-sink.js';
export { safeFileComponent, dataFileName, errorsFileName } from '../file-drop/file-names.js';

/** The CSV drop connector: RFC 4180 files, one per table per published batch, with a manifest written last. */
export const csvConnector: ConnectorFactory<CsvOptions> = {
  name: 'csv',
  configSchema: csvOptionsSchema,
  capabilities: () => ({ sink: true, source: false }),
  create(options: CsvOptions, context: ConnectorContext): ConnectorInstance {
    const directory = path.resolve(context.baseDir, options.directory);
    const logger = context.logger.child({ connector: context.instanceName, type: 'csv' });
    const sink = new CsvSink({ directory, options, mappings: context.mappings, logger, ...(context.writerFence ? { lock: { fence: context.writerFence } } : {}) });
    const reader = new DropSinkReader({ target: new LocalTarget(), directory, options, mappings: context.mappings });
    return {
      sink,
      reader,
      // Document files (documentFiles stream) go to folders inside the drop directory.
      files: new TargetFileStore(new LocalTarget(), directory),
      async init() {
        await mkdir(path.join(directory, STAGING_DIR), { recursive: true });
        for (const dir of [directory, path.join(directory, STAGING_DIR)]) {
          const removed = await removeStaleTempFiles(new LocalTarget(), dir, STALE_TEMP_MS);
          if (removed.length > 0) logger.warn({ directory: dir, removed }, 'removed temp files left by an earlier crash');
        }
        // Batches staged before a crash were acknowledged: publish them before anything new.
        await sink.recover();
      },
      async check() {
        await access(directory, constants.W_OK);
      },
      async close() {
        try {
          await sink.close();
        } catch (error) {
          // Durable in the staging folder: published at the next start.
          logger.warn({ err: error, directory }, 'could not publish the open batch at close; it is published at the next start');
        }
      },
    };
  },
};

export default csvConnector;
