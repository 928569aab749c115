import pLimit from 'p-limit';
import { mappingRejections, type ContractLogger, type RecordBatch, type RecordSink, type SinkAck, type StreamMapper } from '../../src/contracts/index.js';
import { throwIfAborted } from '../../src/util/abort.js';
import type { FileTarget, StagedFile } from './file-target.js';
import { encodeCsv, latin1Check } from './encode-csv.js';
import { dataFileName } from './file-names.js';
import { removeMarkers, writeMarker, type ManifestInfo } from './markers.js';
import { applyRetention } from './retention.js';
import type { CsvFormat } from './format-options.js';

interface PlannedFile {
  readonly name: string;
  readonly content: Buffer;
  readonly info: ManifestInfo;
}

export interface DropSinkDeps {
  readonly target: FileTarget;
  readonly directory: string;
  readonly options: CsvFormat;
  /** One mapper per stream this sink receives (from the connector context). */
  readonly mappings: ReadonlyMap<string, StreamMapper>;
  readonly logger: ContractLogger;
  /** Files of one batch staged at the same time (SFTP: `maxParallelTransfers`); 1 for a local folder. */
  readonly parallel?: number;
}

/**
 * Writes each batch as one CSV file per table into a file target. A record that fails to map
 * (a date that does not parse, text latin1 cannot hold) is left out of the files and named in
 * the acknowledgement (`{ rejected }`): the engine quarantines it and re-delivers it later, and
 * `freight-sync rejected list` shows it — the drop folder holds data only (no errors files, which
 * a folder of immutable batch files could not keep consistent with later re-deliveries). Two phases so a consumer never
 * sees half a batch from an aborted write: (1) every file is staged under a temp name — an abort
 * or error here removes the temps and leaves the previous state untouched; (2) the renames,
 * directory sync and markers run to completion without checking the signal (they are short).
 */
export class FileDropSink implements RecordSink {
  private readonly limit: ReturnType<typeof pLimit>;

  constructor(private readonly deps: DropSinkDeps) {
    this.limit = pLimit(Math.max(1, deps.parallel ?? 1));
  }

  async write(batch: RecordBatch, signal: AbortSignal): Promise<SinkAck> {
    throwIfAborted(signal);
    const { options, logger, directory, target } = this.deps;
    const mapper = this.mapperFor(batch.stream);
    const latin1 = options.encoding === 'latin1';
    const { batch: mapped, errors } = mapper.map(batch, latin1 ? { checkText: latin1Check } : {});

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

    const staged = await this.stageAll(planned, signal);

    // Phase 2: publish; not abortable, so the batch becomes visible as a whole.
    try {
      for (const { staged: file } of staged) {
        await removeMarkers(target, file.finalPath);
        await target.commit(file);
      }
    } catch (error) {
      await Promise.all(staged.map((s) => target.discard(s.staged)));
      throw error;
    }
    await target.syncDir(directory);
    if (options.marker !== 'none') {
      for (const { file, staged: s } of staged) await writeMarker(target, options.marker, s, file.info);
      await target.syncDir(directory);
    }

    if (options.retention) {
      try {
        const deleted = await applyRetention(target, directory, options.retention, new Set(planned.map((f) => f.name)));
        if (deleted.length > 0) logger.info({ directory: target.describe(directory), deleted: deleted.length }, 'retention removed old files');
      } catch (error) {
        // The batch is committed; a failed clean-up must not make the engine re-send it.
        logger.warn({ err: error, directory: target.describe(directory) }, 'retention failed');
      }
    }
    return { rejected: mappingRejections(errors) };
  }

  /** Phase 1: stage every file (up to `parallel` at once); on any failure, discard all that were staged. */
  private async stageAll(planned: readonly PlannedFile[], signal: AbortSignal): Promise<{ file: PlannedFile; staged: StagedFile }[]> {
    const { target, directory } = this.deps;
    const results = await Promise.allSettled(
      planned.map((file) =>
        this.limit(async () => {
          throwIfAborted(signal);
          return { file, staged: await target.stage(directory, file.name, file.content, signal) };
        }),
      ),
    );
    const staged = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure || signal.aborted) {
      await Promise.all(staged.map((s) => target.discard(s.staged)));
      throwIfAborted(signal);
      throw failure!.reason;
    }
    return staged;
  }

  private mapperFor(stream: string): StreamMapper {
    const mapper = this.deps.mappings.get(stream);
    // The composition root gives a mapper for every stream routed to this connector.
    if (!mapper) throw new Error(`stream ${stream}: this sink has no mapping for it (it receives: ${[...this.deps.mappings.keys()].join(', ') || 'nothing'})`);
    return mapper;
  }
}
