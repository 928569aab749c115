import { access, mkdir } from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';
import type { ConnectorContext, ConnectorFactory, ConnectorInstance } from '../../src/contracts/index.js';
import { LocalTarget } from '../file-drop/local-target.js';
import { removeStaleTempFiles } from '../file-drop/retention.js';
import { STALE_TEMP_MS } from '../file-drop/index.js';
import { DropSinkReader } from '../file-drop/drop-reader.js';
import { TargetFileStore } from '../file-drop/file-store.js';
import { CsvSink } from './csv-sink.js';
import { csvOptionsSchema, type CsvOptions } from './options.js';

export { csvOptionsSchema, type CsvOptions, type CsvOptionsInput } from './options.js';
export { CsvSink } from './csv-sink.js';
export { safeFileComponent, dataFileName, errorsFileName } from '../file-drop/file-names.js';

/** The CSV drop connector: one RFC 4180 file per batch per table, written atomically. */
export const csvConnector: ConnectorFactory<CsvOptions> = {
  name: 'csv',
  configSchema: csvOptionsSchema,
  capabilities: () => ({ sink: true, source: false }),
  create(options: CsvOptions, context: ConnectorContext): ConnectorInstance {
    const directory = path.resolve(context.baseDir, options.directory);
    const logger = context.logger.child({ connector: context.instanceName, type: 'csv' });
    const sink = new CsvSink({ directory, options, mappings: context.mappings, logger });
    const reader = new DropSinkReader({ target: new LocalTarget(), directory, options, mappings: context.mappings });
    return {
      sink,
      reader,
      // Document files (documentFiles stream) go to folders inside the drop directory.
      files: new TargetFileStore(new LocalTarget(), directory),
      async init() {
        await mkdir(directory, { recursive: true });
        const removed = await removeStaleTempFiles(new LocalTarget(), directory, STALE_TEMP_MS);
        if (removed.length > 0) logger.warn({ directory, removed }, 'removed temp files left by an earlier crash');
      },
      async check() {
        await access(directory, constants.W_OK);
      },
      async close() {
        // Nothing held open between writes.
      },
    };
  },
};

export default csvConnector;
