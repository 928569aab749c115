import path from 'node:path';
import type { Logger } from '../../src/util/logger.js';
import type { RecordSink } from '../../src/plugins/connector.js';
import type { RecordBatch } from '../../src/sync/record.js';
import { throwIfAborted } from '../../src/util/abort.js';
import { isStreamMapping, loadMapping, mapBatch, parseMapping, type StreamMapping } from '../../src/mapping/index.js';
import { commitStaged, discardStaged, fsyncDirectory, removeIfExists, stageFile, type StagedFile } from './atomic-file.js';
import { encodeCsv, latin1Check } from './encode-csv.js';
import { dataFileName, errorsFileName } from './file-names.js';
import { ERROR_COLUMNS, errorRows, escapeNonLatin1 } from './errors-file.js';
import { removeMarkers, writeMarker, type ManifestInfo } from './markers.js';
import { applyRetention } from './retention.js';
import type { CsvOptions } from './options.js';

interface PlannedFile {
  readonly name: string;
  readonly content: Buffer;
  readonly info: ManifestInfo;
}

export interface CsvSinkDeps {
  readonly directory: string;
  readonly options: CsvOptions;
  readonly mappings: ReadonlyMap<string, unknown>;
  readonly logger: Logger;
  readonly baseDir: string;
}

/**
 * Writes each batch as one CSV file per table. Two phases so a consumer never sees half a batch
 * from an aborted write: (1) every file is written and fsync'd under a temp name — an abort or
 * error here removes the temps and leaves the previous state untouched; (2) the renames, directory
 * fsync and markers run to completion without checking the signal (they take milliseconds).
 */
export class CsvSink implements RecordSink {
  private readonly fallbackMappings = new Map<string, Promise<StreamMapping>>();

  constructor(private readonly deps: CsvSinkDeps) {}

  async write(batch: RecordBatch, signal: AbortSignal): Promise<void> {
    throwIfAborted(signal);
    const { options, logger, directory } = this.deps;
    const mapping = await this.mappingFor(batch.stream);
    const latin1 = options.encoding === 'latin1';
    const { batch: mapped, errors } = mapBatch(batch, mapping, latin1 ? { checkText: latin1Check } : {});

    if (errors.length > 0) {
      for (const { errors: problems } of errors) {
        for (const problem of problems) {
          logger.error({ stream: problem.stream, key: problem.key, table: problem.table, column: problem.column, batchId: batch.batchId }, problem.message);
        }
      }
      // Every problem is logged above; the first one stands for the batch.
      if (options.onMappingError === 'fail') throw errors[0]!.errors[0];
    }

    const planned: PlannedFile[] = mapped.tables.map((table) => ({
      name: dataFileName(table.table, batch.batchId),
      content: encodeCsv(table.columns, table.rows, options),
      info: { table: table.table, stream: batch.stream, batchId: batch.batchId, rows: table.rows.length, kind: 'data' },
    }));
    const errorsName = errorsFileName(mapping.root.table, batch.batchId);
    if (errors.length > 0) {
      let rows = errorRows(batch.batchId, errors, mapping);
      if (latin1) rows = escapeNonLatin1(rows);
      planned.push({
        name: errorsName,
        content: encodeCsv(ERROR_COLUMNS, rows, { ...options, header: true }),
        info: { table: mapping.root.table, stream: batch.stream, batchId: batch.batchId, rows: rows.length, kind: 'errors' },
      });
    }

    // Phase 1: stage everything; abortable.
    const staged: { file: PlannedFile; staged: StagedFile }[] = [];
    try {
      for (const file of planned) {
        throwIfAborted(signal);
        staged.push({ file, staged: await stageFile(directory, file.name, file.content) });
      }
      throwIfAborted(signal);
    } catch (error) {
      await Promise.all(staged.map((s) => discardStaged(s.staged)));
      throw error;
    }

    // Phase 2: publish; not abortable, so the batch becomes visible as a whole.
    try {
      for (const { staged: file } of staged) {
        await removeMarkers(file.finalPath);
        await commitStaged(file);
      }
    } catch (error) {
      await Promise.all(staged.map((s) => discardStaged(s.staged)));
      throw error;
    }
    if (errors.length === 0) {
      // A replay that now maps cleanly supersedes the error report of an earlier attempt.
      const stale = path.join(directory, errorsName);
      await removeMarkers(stale);
      await removeIfExists(stale);
    }
    await fsyncDirectory(directory);
    if (options.marker !== 'none') {
      for (const { file, staged: s } of staged) await writeMarker(options.marker, s, file.info);
      await fsyncDirectory(directory);
    }

    if (options.retention) {
      try {
        const deleted = await applyRetention(directory, options.retention, new Set(planned.map((f) => f.name)));
        if (deleted.length > 0) logger.info({ directory, deleted: deleted.length }, 'csv retention removed old files');
      } catch (error) {
        // The batch is committed; a failed clean-up must not make the engine re-send it.
        logger.warn({ err: error, directory }, 'csv retention failed');
      }
    }
  }

  private async mappingFor(stream: string): Promise<StreamMapping> {
    const configured = this.deps.mappings.get(stream);
    if (isStreamMapping(configured)) return configured;
    if (configured !== undefined) return parseMapping(stream, configured);
    let pending = this.fallbackMappings.get(stream);
    if (!pending) {
      this.deps.logger.warn({ stream }, 'no mapping resolved for this stream; using its default mapping');
      pending = loadMapping(stream, undefined, { baseDir: this.deps.baseDir });
      this.fallbackMappings.set(stream, pending);
    }
    return pending;
  }
}
