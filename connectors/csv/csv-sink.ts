import type { ContractLogger, StreamMapper } from '../../src/contracts/index.js';
import type { DropLockOptions } from '../file-drop/drop-lock.js';
import { FileDropSink } from '../file-drop/drop-sink.js';
import { LocalTarget } from '../file-drop/local-target.js';
import type { CsvOptions } from './options.js';

export interface CsvSinkDeps {
  readonly directory: string;
  readonly options: CsvOptions;
  readonly mappings: ReadonlyMap<string, StreamMapper>;
  readonly logger: ContractLogger;
  /** The writer lock's options: the account lease it records (ConnectorContext.writerFence). */
  readonly lock?: DropLockOptions;
}

/** The file-drop sink on a local folder (pages appended to a batch's page log and fdatasync'd; batch files fsync'd and renamed). */
export class CsvSink extends FileDropSink {
  constructor(deps: CsvSinkDeps) {
    super({ ...deps, target: new LocalTarget() });
  }
}
