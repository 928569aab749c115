import type { Logger } from '../../src/util/logger.js';
import { FileDropSink } from '../file-drop/drop-sink.js';
import { LocalTarget } from '../file-drop/local-target.js';
import type { CsvOptions } from './options.js';

export interface CsvSinkDeps {
  readonly directory: string;
  readonly options: CsvOptions;
  readonly mappings: ReadonlyMap<string, unknown>;
  readonly logger: Logger;
  readonly baseDir: string;
}

/** The file-drop sink on a local folder (fsync'd temp file, rename, directory fsync). */
export class CsvSink extends FileDropSink {
  constructor(deps: CsvSinkDeps) {
    super({ ...deps, target: new LocalTarget(), parallel: 1 });
  }
}
