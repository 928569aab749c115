import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import type { CommandSource, DryRunResult, InboundResult, InboundUnit } from '../../src/contracts/index.js';
import type { ContractLogger as Logger } from '../../src/contracts/index.js';
import { throwIfAborted } from '../../src/util/abort.js';
import { describeError } from '../../src/util/errors.js';
import type { FileEntry, FileTarget } from '../file-drop/file-target.js';
import { writeFileAtomic } from '../file-drop/file-target.js';
import { DONE_SUFFIX } from '../file-drop/file-names.js';
import { InboxError } from './errors.js';
import { globToRegExp, isPartialName } from './glob.js';
import type { InboxFolders, InboxOptions } from './inbox-options.js';
import { formatOf, parseCsvRequests, parseJsonRequests } from './parse-requests.js';
import { DRY_RUN_SUFFIX, ERRORS_SUFFIX, RESULT_SUFFIX, dryRunCsv, errorsReport, resultCsv } from './result-files.js';

export interface InboxSourceDeps {
  readonly target: FileTarget;
  readonly folders: InboxFolders;
  readonly options: InboxOptions;
  readonly logger: Logger;
  /** Downloads at the same time (SFTP: `maxParallelTransfers`). */
  readonly parallel?: number;
}

/**
 * A folder of request files as a `CommandSource`. `take` reads complete files from the inbox
 * (the unit id is `<name>#<sha256 prefix of the content>`, so the same file taken twice yields
 * the same id and a new file under an old name a new one); `accepted` moves the file to
 * `processing/`; `writeBack` puts `<name>.result.csv` (and `<name>.errors.txt` when any request
 * failed) into `processed/` or `failed/` and then moves the file beside them. `peek` and
 * `writeDryRun` serve `push --dry-run` and leave the file where it is.
 */
export class InboxSource implements CommandSource {
  private readonly pattern: RegExp;
  private readonly limit: ReturnType<typeof pLimit>;
  /** Size and mtime of each candidate at the previous poll, for the "stable across two listings" rule. */
  private previous = new Map<string, string>();
  private prepared = false;

  constructor(private readonly deps: InboxSourceDeps) {
    this.pattern = globToRegExp(deps.options.pattern);
    this.limit = pLimit(Math.max(1, deps.parallel ?? 1));
  }

  /** Creates the inbox and its sub-folders when missing. */
  async prepare(signal?: AbortSignal): Promise<void> {
    const { target, folders } = this.deps;
    for (const dir of [folders.dir, folders.processing, folders.processed, folders.failed]) await target.ensureDir(dir, signal);
    this.prepared = true;
  }

  async take(signal: AbortSignal): Promise<InboundUnit[]> {
    throwIfAborted(signal);
    if (!this.prepared) await this.prepare(signal);
    const { target, folders, options } = this.deps;
    const entries = await target.list(folders.dir);
    const names = new Set(entries.map((e) => e.name));
    const candidates = entries.filter((e) => e.isFile && this.isRequestFile(e.name));

    const ready: typeof candidates = [];
    const seen = new Map<string, string>();
    for (const entry of candidates) {
      const signature = signatureOf(entry);
      seen.set(entry.name, signature);
      const marked = names.has(`${entry.name}${DONE_SUFFIX}`);
      const stable = options.readyWhen === 'stable' && this.previous.get(entry.name) === signature;
      if (marked || stable) ready.push(entry);
    }
    this.previous = seen;
    return this.read(oldestFirst(ready).slice(0, options.maxFilesPerTake), signal);
  }

  /**
   * `push --dry-run`: every complete request file of the inbox (all of them, not
   * `maxFilesPerTake`), read where it lies. A file is complete when marked, or (`readyWhen:
   * stable`) when it did not change while it was read; one still being written is left out.
   */
  async peek(signal: AbortSignal): Promise<InboundUnit[]> {
    throwIfAborted(signal);
    if (!this.prepared) await this.prepare(signal);
    const { target, folders, options } = this.deps;
    const entries = await target.list(folders.dir);
    const names = new Set(entries.map((e) => e.name));
    const candidates = entries.filter((e) => e.isFile && this.isRequestFile(e.name) && (options.readyWhen === 'stable' || names.has(`${e.name}${DONE_SUFFIX}`)));
    const units = await this.read(oldestFirst(candidates), signal);
    const after = new Map((await target.list(folders.dir)).map((e) => [e.name, signatureOf(e)]));
    const before = new Map(candidates.map((e) => [e.name, signatureOf(e)]));
    return units.filter((u) => after.get(fileNameOf(u.id)) === before.get(fileNameOf(u.id)));
  }

  /**
   * `push --dry-run` outcomes as `<file>.dry-run.result.csv` beside the file in the inbox (the
   * result file's columns plus `dry_run` and `outcome`). The request file is not touched; taking
   * it later removes this file (it describes a run that sent nothing).
   */
  async writeDryRun(unitId: string, results: readonly DryRunResult[], signal: AbortSignal): Promise<void> {
    throwIfAborted(signal);
    const { target, folders } = this.deps;
    const name = fileNameOf(unitId);
    // Taken meanwhile (a daemon beside the dry run): a result beside nothing would only confuse.
    if (!(await target.exists(target.join(folders.dir, name)))) return;
    await writeFileAtomic(target, folders.dir, `${name}${DRY_RUN_SUFFIX}`, dryRunCsv(results), signal);
  }

  private async read(entries: readonly FileEntry[], signal: AbortSignal): Promise<InboundUnit[]> {
    const { target, folders, logger } = this.deps;
    const units = await Promise.all(
      entries.map((entry) =>
        this.limit(async (): Promise<InboundUnit | undefined> => {
          throwIfAborted(signal);
          const file = target.join(folders.dir, entry.name);
          let content: Buffer;
          try {
            content = await target.read(file, signal);
          } catch (error) {
            // Taken by someone else or removed by the ERP; the next poll sees the truth.
            if (signal.aborted) throw error;
            logger.warn({ file: target.describe(file), err: error }, 'inbox file could not be read; retrying at the next poll');
            return undefined;
          }
          return { id: unitId(entry.name, content), location: target.describe(file), requests: this.parse(entry.name, content) };
        }),
      ),
    );
    return units.filter((u): u is InboundUnit => u !== undefined);
  }

  async accepted(unit: InboundUnit, signal: AbortSignal): Promise<void> {
    throwIfAborted(signal);
    const { target, folders } = this.deps;
    const name = fileNameOf(unit.id);
    const from = target.join(folders.dir, name);
    const to = target.join(folders.processing, name);
    if (await target.exists(from)) {
      await target.move(from, to);
    } else if (!(await target.exists(to))) {
      throw new InboxError(`inbox unit ${unit.id}: ${target.describe(from)} is gone and is not in ${target.describe(folders.processing)}`);
    }
    // The marker announced a file that is no longer in the inbox; a dry run's result described it there.
    await target.removeIfExists(`${from}${DONE_SUFFIX}`);
    await target.removeIfExists(`${from}${DRY_RUN_SUFFIX}`);
  }

  async writeBack(unitId: string, results: readonly InboundResult[], signal: AbortSignal): Promise<void> {
    throwIfAborted(signal);
    const { target, folders, logger } = this.deps;
    const name = fileNameOf(unitId);
    const failed = results.some((r) => r.status === 'failed');
    const destination = failed ? folders.failed : folders.processed;
    const other = failed ? folders.processed : folders.failed;

    const current = await this.locate(name, [folders.processing, folders.dir, destination, other]);
    if (!current) {
      throw new InboxError(`inbox unit ${unitId}: ${name} is in none of ${[folders.processing, folders.dir, destination, other].map((d) => target.describe(d)).join(', ')}`);
    }
    // Results first, so the file never sits in processed/ or failed/ without its result beside it.
    await writeFileAtomic(target, destination, `${name}${RESULT_SUFFIX}`, resultCsv(results), signal);
    if (failed) await writeFileAtomic(target, destination, `${name}${ERRORS_SUFFIX}`, errorsReport(name, results), signal);
    else await target.removeIfExists(target.join(destination, `${name}${ERRORS_SUFFIX}`));
    const final = target.join(destination, name);
    if (current !== final) {
      await target.move(current, final);
      if (target.dirname(current) === other) {
        // A repeated write-back with a different outcome: the old result files go with the file.
        await target.removeIfExists(target.join(other, `${name}${RESULT_SUFFIX}`));
        await target.removeIfExists(target.join(other, `${name}${ERRORS_SUFFIX}`));
      }
    }
    await target.removeIfExists(target.join(folders.dir, `${name}${DONE_SUFFIX}`));
    logger.info({ file: target.describe(final), requests: results.length, failed: results.filter((r) => r.status === 'failed').length }, 'inbox file retired');
  }

  private async locate(name: string, dirs: readonly string[]): Promise<string | undefined> {
    for (const dir of dirs) {
      const candidate = this.deps.target.join(dir, name);
      if (await this.deps.target.exists(candidate)) return candidate;
    }
    return undefined;
  }

  private isRequestFile(name: string): boolean {
    if (isPartialName(name) || !this.pattern.test(name)) return false;
    return !name.endsWith(DONE_SUFFIX) && !name.endsWith(RESULT_SUFFIX) && !name.endsWith(ERRORS_SUFFIX);
  }

  private parse(name: string, content: Buffer) {
    const { options, logger } = this.deps;
    const text = content.toString(options.encoding);
    try {
      return formatOf(name) === 'json' ? parseJsonRequests(text) : parseCsvRequests(text, { delimiter: options.delimiter, maxRecordLength: options.maxRecordLength });
    } catch (error) {
      // The parsers report per row; this is a bug guard so one file can never stop the inbox.
      logger.error({ file: name, err: error }, 'inbox file could not be parsed');
      return [{ ref: '1', fields: {}, problem: `file could not be parsed: ${describeError(error)}` }];
    }
  }
}

function signatureOf(entry: FileEntry): string {
  return `${entry.size}:${entry.mtimeMs}`;
}

/** Oldest first, so files are handled in the order the ERP dropped them. */
function oldestFirst(entries: readonly FileEntry[]): FileEntry[] {
  return [...entries].sort((a, b) => a.mtimeMs - b.mtimeMs || a.name.localeCompare(b.name));
}

/** Deterministic for the same file content under the same name. */
export function unitId(name: string, content: Buffer): string {
  return `${name}#${createHash('sha256').update(content).digest('hex').slice(0, 16)}`;
}

export function fileNameOf(unitId: string): string {
  const hash = unitId.lastIndexOf('#');
  return hash === -1 ? unitId : unitId.slice(0, hash);
}
