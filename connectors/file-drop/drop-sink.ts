import { mappingRejections, type ContractLogger, type RecordBatch, type RecordSink, type SinkAck, type StreamMapper } from '../../src/contracts/index.js';
import { throwIfAborted } from '../../src/util/abort.js';
import { releaseBuffer } from '../../src/util/large-buffers.js';
import type { AppendLog, FileTarget } from './file-target.js';
import { encodeCsv, latin1Check } from './encode-csv.js';
import { batchFileOf, batchName, parseBatchName, STAGING_DIR, utcStamp } from './file-names.js';
import { applyRetention } from './retention.js';
import type { CsvFormat } from './format-options.js';
import { chunkLayout, encodeChunk, type ChunkTable, type PartLayout } from './page-chunk.js';
import { FRAME_HEADER_BYTES, frameHeader } from './page-frames.js';
import { scanPageLog } from './page-log-scan.js';
import { publishBatch, PUBLISHED_SUFFIX, type StagedPage } from './publish-batch.js';
import { DropWriterLock, DropWriterLockLostError, type DropLockOptions } from './drop-lock.js';

const PAGE_SUFFIX = '.page';
/** Retention by age alone runs at most this often (see `retentionDue`). */
const AGE_RETENTION_EVERY_MS = 60_000;
const LOG_SUFFIX = '.pages';
/** A page staged as a file of its own: `<batch>.<page>.page` (targets without page logs, and older versions). */
const STAGED_PAGE = /^(\d{8}T\d{6}Z-\d{6,})\.(\d{6,})\.page$/;
/** A segment of a batch's page log: `<batch>.<segment>.pages` (page-frames.ts). */
const PAGE_LOG = /^(\d{8}T\d{6}Z-\d{6,})\.(\d{6,})\.pages$/;

export interface DropSinkDeps {
  readonly target: FileTarget;
  readonly directory: string;
  readonly options: CsvFormat;
  /** One mapper per stream this sink receives (from the connector context). */
  readonly mappings: ReadonlyMap<string, StreamMapper>;
  readonly logger: ContractLogger;
  /** Clock for batch names and retention (tests); defaults to the system clock. */
  readonly now?: () => Date;
  /** The writer lock's host name and clock (tests play two hosts; by default this host and `now`), and the account lease it records. */
  readonly lock?: DropLockOptions;
}

interface OpenBatch {
  readonly name: string;
  readonly pages: StagedPage[];
  /** Every staging file holding its pages (page files, or page log segments). */
  readonly files: string[];
  /** The page log pages are appended to, where the target has page logs; a new segment after one that failed beyond repair. */
  log: AppendLog | undefined;
  segment: number;
  readonly rows: Map<string, number>;
  /** Each table's head (BOM, header line): a page with another head starts a new batch. */
  readonly heads: Map<string, Buffer>;
}

/**
 * Writes a CSV drop an ERP can consume in batches. Each `write` maps the page and stages it — all
 * its tables in one frame appended to the batch's page log in the hidden `.staging` folder and
 * fdatasync'd (page-frames.ts; on a target without page logs, SFTP, one file per page, written,
 * fsync'd and renamed) — before it resolves: that is the acknowledgement, and a `kill -9` right
 * after it loses nothing. Pages
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
    this.lock = new DropWriterLock(deps.target, this.stagingDir, deps.logger, { now: () => this.now().getTime(), ...deps.lock });
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
      await this.exclusive(async () => {
        // A batch that could not be published keeps its page log on disk, not its file handle.
        if (this.open) await this.closeLog(this.open);
        await this.lock.release();
      }).catch(() => undefined);
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
    // A writer paused long enough to lose its lock learns it here, before it appends to a batch the
    // new holder has published (and removed) as a crashed writer's.
    await this.keepLock();
    const open: OpenBatch = (this.open ??= { name: this.nextBatchName(), pages: [], files: [], log: undefined, segment: 0, rows: new Map(), heads: new Map() });
    // The page number only advances once the page is in: a retried write reuses (replaces) it.
    const number = open.pages.length + 1;
    const parts = encodeChunk(tables);
    const layout = chunkLayout(parts, tables);
    open.pages.push(target.openAppendLog ? await this.appendPage(open, number, parts, layout) : await this.stagePageFile(open, number, parts, layout, signal));
    // And here, when the append itself stalled that long: the page is then not acknowledged (it may
    // be published by the new holder too — a row twice rather than a row lost).
    await this.keepLock();
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

  /**
   * Appends the page as one frame of the batch's page log (opened at the batch's first page, a
   * new segment after a log that a failed append left unusable) and syncs it. A failed append
   * takes its bytes back off the file, so the retried page follows the last acknowledged one.
   */
  private async appendPage(open: OpenBatch, number: number, parts: Buffer[], layout: readonly PartLayout[]): Promise<StagedPage> {
    const { target } = this.deps;
    if (open.log && !open.log.usable) {
      await open.log.close();
      open.log = undefined;
    }
    if (!open.log) {
      open.segment += 1;
      const name = `${open.name}.${String(open.segment).padStart(6, '0')}${LOG_SUFFIX}`;
      open.log = await target.openAppendLog!(this.stagingDir, name);
      open.files.push(name);
    }
    const at = await open.log.append([frameHeader(number, parts), ...parts]);
    const payloadAt = at + FRAME_HEADER_BYTES;
    return { file: open.log.name, parts: layout.map((part) => ({ ...part, at: payloadAt + part.at })) };
  }

  /** The page as a file of its own: written under a temp name, fsync'd, renamed, the folder synced. */
  private async stagePageFile(open: OpenBatch, number: number, parts: Buffer[], layout: readonly PartLayout[], signal: AbortSignal): Promise<StagedPage> {
    const { target } = this.deps;
    const page = `${open.name}.${String(number).padStart(6, '0')}${PAGE_SUFFIX}`;
    const staged = await target.stage(this.stagingDir, page, parts, signal);
    try {
      await target.commit(staged);
    } catch (error) {
      await target.discard(staged);
      throw error;
    }
    await target.syncDir(this.stagingDir);
    if (!open.files.includes(page)) open.files.push(page);
    return { file: page, parts: layout };
  }

  private async publishOpen(): Promise<void> {
    const open = this.open;
    if (!open) return;
    await this.keepLock();
    // The log is complete: publishing reads it by byte ranges. A failed publish leaves the batch
    // open, and its next page goes to a new segment.
    await this.closeLog(open);
    await this.publish(open.name, open.pages, open.files);
    this.open = undefined;
    await this.lock.release();
  }

  /**
   * Refreshes the writer lock and checks it is still this writer's (drop-lock.ts). Lost, the open
   * batch is let go as it is on disk — its acknowledged pages are the new holder's to publish, as a
   * crashed writer's — and the error goes up; the next write waits for the lock again.
   */
  private async keepLock(): Promise<void> {
    try {
      await this.lock.keep();
    } catch (error) {
      if (error instanceof DropWriterLockLostError && this.open) {
        const open = this.open;
        this.open = undefined;
        await this.closeLog(open).catch(() => undefined);
        this.deps.logger.error({ err: error, directory: this.deps.target.describe(this.deps.directory), batch: open.name }, 'drop writer lock lost: this batch is left staged for the writer that took the lock over');
      }
      throw error;
    }
  }

  private async closeLog(open: OpenBatch): Promise<void> {
    const log = open.log;
    open.log = undefined;
    await log?.close();
  }

  /**
   * Takes the writer lock (waiting while another process has a batch open), then catches up with
   * what other writers did meanwhile: the last batch name, and batches a crashed one left staged.
   */
  private async acquire(signal: AbortSignal, wait = true): Promise<void> {
    if (!(await this.lock.acquire(signal, { wait }))) return;
    const { target, directory } = this.deps;
    for (const name of await this.namesIn(directory)) this.noteBatch(batchFileOf(name)?.batch);
    // Per batch: its pages by number (a later copy of a number replaces an earlier one) and its files.
    const leftover = new Map<string, { pages: Map<number, StagedPage>; files: string[] }>();
    const batchOf = (batch: string) => {
      let entry = leftover.get(batch);
      if (!entry) leftover.set(batch, (entry = { pages: new Map(), files: [] }));
      this.noteBatch(batch);
      return entry;
    };
    const names = (await this.namesIn(this.stagingDir)).sort();
    const published = new Set(names.filter((name) => name.endsWith(PUBLISHED_SUFFIX)).map((name) => name.slice(0, -PUBLISHED_SUFFIX.length)));
    for (const name of names) {
      const page = STAGED_PAGE.exec(name);
      const log = PAGE_LOG.exec(name);
      if (page && parseBatchName(page[1]!)) {
        const entry = batchOf(page[1]!);
        entry.files.push(name);
        entry.pages.set(Number(page[2]), { file: name });
      } else if (log && parseBatchName(log[1]!)) {
        const entry = batchOf(log[1]!);
        entry.files.push(name);
        // A batch already published only has its staged files removed: its log is not read.
        if (published.has(log[1]!)) continue;
        const scan = await scanPageLog(target, this.stagingDir, name);
        if (scan.torn) this.deps.logger.warn({ file: target.describe(target.join(this.stagingDir, name)), pages: scan.pages.length, intactBytes: scan.intactBytes }, 'page log ends in a torn page (written, never acknowledged): left out');
        for (const { page: number, staged } of scan.pages) entry.pages.set(number, staged);
      } else if (name.endsWith(PUBLISHED_SUFFIX) && parseBatchName(name.slice(0, -PUBLISHED_SUFFIX.length))) {
        batchOf(name.slice(0, -PUBLISHED_SUFFIX.length));
      }
    }
    for (const batch of [...leftover.keys()].sort()) {
      const { pages, files } = leftover.get(batch)!;
      const inOrder = [...pages.keys()].sort((a, b) => a - b).map((number) => pages.get(number)!);
      this.deps.logger.warn({ directory: target.describe(directory), batch, pages: inOrder.length }, 'publishing a batch staged before a crash');
      await this.publish(batch, inOrder, files);
    }
  }

  /** Names only (the batch names and staged pages are all `acquire` reads): no stat per file where the target can skip it. */
  private async namesIn(dir: string): Promise<string[]> {
    const { target } = this.deps;
    return target.listNames ? target.listNames(dir) : (await target.list(dir)).map((entry) => entry.name);
  }

  private async publish(batch: string, pages: readonly StagedPage[], staged: readonly string[]): Promise<void> {
    const { target, directory, options, logger } = this.deps;
    const files = await publishBatch({ target, directory, stagingDir: this.stagingDir, batch, pages, files: staged, marker: options.marker });
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
