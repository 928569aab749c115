import type { ContractLogger, StreamMapper } from '../../src/contracts/index.js';
import { FileDropSink } from '../file-drop/drop-sink.js';
import { LocalTarget } from '../file-drop/local-target.js';
import type { CsvOptions } from './options.js';

export interface CsvSinkDeps {
  readonly directory: string;
  readonly options: CsvOptions;
  readonly mappings: ReadonlyMap<string, StreamMapper>;
  readonly logger: ContractLogger;
}

/** The file-drop sink on a local folder (fsync'd temp file, rename, directory fsync). */
export class CsvSink extends FileDropSink {
  constructor(deps: CsvSinkDeps) {
    super({ ...deps, target: new LocalTarget() });
  }
}
