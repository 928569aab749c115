import { mappingRejections, type ContractLogger, type RecordBatch, type RecordSink, type SinkAck, type StreamMapper } from '../../src/contracts/index.js';
import { throwIfAborted } from '../../src/util/abort.js';
import { releaseBuffer } from '../../src/util/release-buffer.js';
import type { FileTarget } from './file-target.js';
import { encodeCsv, latin1Check } from './encode-csv.js';
import { batchFileOf, batchName, parseBatchName, STAGING_DIR, utcStamp } from './file-names.js';
import { applyRetention } from './retention.js';
import type { CsvFormat } from './format-options.js';
import { chunkLayout, encodeChunk, type ChunkTable, type PartLayout } from './page-chunk.js';
import { publishBatch, PUBLISHED_SUFFIX } from './publish-batch.js';
import { DropWriterLock } from './drop-lock.js';

const PAGE_SUFFIX = '.page';
/** Retention by age alone runs at most this often (see `retentionDue`). */
const AGE_RETENTION_EVERY_MS = 60_000;
const STAGED_PAGE = /^(\d{8}T\d{6}Z-\d{6,})\.(\d{6,})\.page$/;

export interface DropSinkDeps {
  readonly target: FileTarget;
  readonly directory: string;
  readonly options: CsvFormat;
  /** One mapper per stream this sink receives (from the connector context). */
  readonly mappings: ReadonlyMap<string, StreamMapper>;
  readonly logger: ContractLogger;
  /** Clock for batch names and retention (tests); defaults to the system clock. */
  readonly now?: () => Date;
}

interface OpenBatch {
  readonly name: string;
  readonly pages: string[];
  readonly rows: Map<string, number>;
  /** Each table's head (BOM, header line): a page with another head starts a new batch. */
  readonly heads: Map<string, Buffer>;
  /** Where each page's tables are in its file: publishing reads only a table's bytes. */
  readonly layouts: Map<string, readonly PartLayout[]>;
}

/**
 * Writes a CSV drop an ERP can consume in batches. Each `write` maps the page and stages it — all
 * its tables in ONE file in the hidden `.staging` folder, written, fsync'd and renamed — before it
 * resolves: that is the acknowledgement, and a `kill -9` right after it loses nothing. Pages
 * accumulate in the open batch; the batch is published (one `<batch>-<table>.csv` per table,
 * then `<batch>.manifest.json` last) at `flush` — the end of every run — or as soon as one of its
 * tables reaches `maxBatchRows` rows. At start (`recover`) batches a crash left staged are
 * published first, in order. A record that fails to map is left out and named in the
 * acknowledgement (`{ rejected }`): the engine quarantines and re-delivers it. Writes and
 * publishing are serialised: one batch is open at a time, so batches are published in name order.
 * Across processes (`run` beside a `sync` on one drop) a writer lock (drop-lock.ts) is held from
 * a batch's first page to its publication: names are chosen, and leftovers of a crashed writer
 * published, only under it.
 */
export class FileDropSink implements RecordSink {
  private queue: Promise<unknown> = Promise.resolve();
  private ready = false;
  private open: OpenBatch | undefined;
  private last: { stamp: string; seq: number } | undefined;
  /** When retention last ran (the sink's clock). */
  private lastRetention: number | undefined;
  private readonly stagingDir: string;
  private readonly lock: DropWriterLock;

  constructor(private readonly deps: DropSinkDeps) {
    this.stagingDir = deps.target.join(deps.directory, STAGING_DIR);
    this.lock = new DropWriterLock(deps.target, this.stagingDir, deps.logger);
  }

  async write(batch: RecordBatch, signal: AbortSignal): Promise<SinkAck> {
    throwIfAborted(signal);
    const { options, logger } = this.deps;
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

    // A table without rows in this page (a load without stops) adds nothing: no header-only files.
    const tables: ChunkTable[] = mapped.tables
      .filter((table) => table.rows.length > 0)
      .map((table) => ({
        table: table.table,
        streams: [batch.stream],
        root: mapper.mapping.root.table,
        key: table.key,
        rows: table.rows.length,
        head: encodeCsv(table.columns, [], options),
        body: encodeCsv(table.columns, table.rows, { ...options, header: false, bom: false }),
      }));
    if (tables.length > 0) {
      await this.exclusive(() => this.stagePage(tables, signal));
      // Staged durably: the rows' bytes are not read again (publishing reads the staged file);
      // the heads stay, the open batch compares them.
      for (const table of tables) releaseBuffer(table.body);
    }
    return { rejected: mappingRejections(errors) };
  }

  /** Publishes the open batch (the engine calls it at the end of every run). */
  async flush(_signal?: AbortSignal): Promise<void> {
    await this.exclusive(async () => {
      await this.prepare();
      await this.publishOpen();
    });
  }

  /**
   * At close: publishes the open batch and, whatever happens, lets go of the writer lock — pages
   * it could not publish are durable and published by the next writer (this one's lock would
   * otherwise hold up other processes until this one exits).
   */
  async close(signal?: AbortSignal): Promise<void> {
    try {
      await this.flush(signal);
    } finally {
      await this.exclusive(() => this.lock.release()).catch(() => undefined);
    }
  }

  /**
   * Publishes, in order, the batches a crash left staged (their pages were acknowledged). While
   * another live process holds the drop, its leftovers wait for this sink's first batch.
   */
  async recover(): Promise<void> {
    await this.exclusive(async () => {
      await this.prepare();
      await this.acquire(new AbortController().signal, false);
      if (!this.open) await this.lock.release();
    });
  }

  private async stagePage(tables: readonly ChunkTable[], signal: AbortSignal): Promise<void> {
    await this.prepare();
    await this.acquire(signal);
    const { target } = this.deps;
    // The same table with another header (a mapping change) cannot share a file: publish first.
    if (this.open && tables.some((t) => this.open!.heads.has(t.table) && !this.open!.heads.get(t.table)!.equals(t.head))) await this.publishOpen();
    const open: OpenBatch = (this.open ??= { name: this.nextBatchName(), pages: [], rows: new Map(), heads: new Map(), layouts: new Map() });
    // The page number only advances once the page is in: a retried write reuses (replaces) it.
    const page = `${open.name}.${String(open.pages.length + 1).padStart(6, '0')}${PAGE_SUFFIX}`;
    const parts = encodeChunk(tables);
    const staged = await target.stage(this.stagingDir, page, parts, signal);
    try {
      await target.commit(staged);
    } catch (error) {
      await target.discard(staged);
      throw error;
    }
    await target.syncDir(this.stagingDir);
    open.pages.push(page);
    open.layouts.set(page, chunkLayout(parts, tables));
    await this.lock.refresh();
    for (const t of tables) {
      open.rows.set(t.table, (open.rows.get(t.table) ?? 0) + t.rows);
      if (!open.heads.has(t.table)) open.heads.set(t.table, t.head);
    }
    if (Math.max(...open.rows.values()) >= this.deps.options.maxBatchRows) {
      try {
        await this.publishOpen();
      } catch (error) {
        // The page is staged durably; the next flush publishes the batch. Failing the write would
        // only make the engine send the page again.
        this.deps.logger.warn({ err: error, directory: target.describe(this.deps.directory), batch: open.name }, 'publishing a full batch failed; retried at the next flush');
      }
    }
  }

  private async publishOpen(): Promise<void> {
    const open = this.open;
    if (!open) return;
    await this.publish(open.name, open.pages, open.layouts);
    this.open = undefined;
    await this.lock.release();
  }

  /**
   * Takes the writer lock (waiting while another process has a batch open), then catches up with
   * what other writers did meanwhile: the last batch name, and batches a crashed one left staged.
   */
  private async acquire(signal: AbortSignal, wait = true): Promise<void> {
    if (!(await this.lock.acquire(signal, { wait }))) return;
    const { target, directory } = this.deps;
    for (const name of await this.namesIn(directory)) this.noteBatch(batchFileOf(name)?.batch);
    const leftover = new Map<string, string[]>();
    for (const name of await this.namesIn(this.stagingDir)) {
      const match = STAGED_PAGE.exec(name);
      const batch = match?.[1] ?? (name.endsWith(PUBLISHED_SUFFIX) ? name.slice(0, -PUBLISHED_SUFFIX.length) : undefined);
      if (!batch || !parseBatchName(batch)) continue;
      const pages = leftover.get(batch) ?? [];
      if (match) pages.push(name);
      leftover.set(batch, pages);
      this.noteBatch(batch);
    }
    for (const batch of [...leftover.keys()].sort()) {
      const pages = leftover.get(batch)!.sort();
      this.deps.logger.warn({ directory: target.describe(directory), batch, pages: pages.length }, 'publishing a batch staged before a crash');
      await this.publish(batch, pages);
    }
  }

  /** Names only (the batch names and staged pages are all `acquire` reads): no stat per file where the target can skip it. */
  private async namesIn(dir: string): Promise<string[]> {
    const { target } = this.deps;
    return target.listNames ? target.listNames(dir) : (await target.list(dir)).map((entry) => entry.name);
  }

  private async publish(batch: string, pages: readonly string[], layouts?: ReadonlyMap<string, readonly PartLayout[]>): Promise<void> {
    const { target, directory, options, logger } = this.deps;
    const files = await publishBatch({ target, directory, stagingDir: this.stagingDir, batch, pages, marker: options.marker, ...(layouts ? { layouts } : {}) });
    if (files.length > 0) logger.debug({ directory: target.describe(directory), batch, files: files.length, rows: files.reduce((s, f) => s + f.rows, 0) }, 'published batch');
    if (!options.retention || !this.retentionDue(options.retention)) return;
    try {
      const deleted = await applyRetention(target, directory, options.retention, batch);
      if (deleted.length > 0) logger.info({ directory: target.describe(directory), deleted: deleted.length }, 'retention removed old files');
    } catch (error) {
      // The batch is published; a failed clean-up must not fail the run.
      logger.warn({ err: error, directory: target.describe(directory) }, 'retention failed');
    }
  }

  /**
   * Retention lists the drop with every file's time: a cost that grows with the drop (30 days of
   * batches by default, and a webhook refresh publishes a batch of its own). By age alone it runs
   * at the first publish and then at most once a minute — ages are counted in days. A file count
   * (`maxFiles`) keeps its pass after every publish: it bounds the drop, and with it the listing.
   */
  private retentionDue(retention: { maxFiles?: number }): boolean {
    const now = this.now().getTime();
    if (retention.maxFiles === undefined && this.lastRetention !== undefined && now - this.lastRetention < AGE_RETENTION_EVERY_MS) return false;
    this.lastRetention = now;
    return true;
  }

  /** Once: create the staging folder (leftovers are published under the lock, in `acquire`). */
  private async prepare(): Promise<void> {
    if (this.ready) return;
    await this.deps.target.ensureDir(this.stagingDir);
    this.ready = true;
  }

  private noteBatch(name: string | undefined): void {
    const parsed = name ? parseBatchName(name) : undefined;
    if (!parsed) return;
    if (!this.last || parsed.stamp > this.last.stamp || (parsed.stamp === this.last.stamp && parsed.seq > this.last.seq)) this.last = parsed;
  }

  private now(): Date {
    return (this.deps.now ?? (() => new Date()))();
  }

  /** Sorts after every batch seen: the time never goes back below the last one's, the sequence grows. */
  private nextBatchName(): string {
    const now = utcStamp(this.now());
    const stamp = this.last && this.last.stamp > now ? this.last.stamp : now;
    const seq = (this.last?.seq ?? 0) + 1;
    this.last = { stamp, seq };
    return batchName(stamp, seq);
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private mapperFor(stream: string): StreamMapper {
    const mapper = this.deps.mappings.get(stream);
    // The composition root gives a mapper for every stream routed to this connector.
    if (!mapper) throw new Error(`stream ${stream}: this sink has no mapping for it (it receives: ${[...this.deps.mappings.keys()].join(', ') || 'nothing'})`);
    return mapper;
  }
}
