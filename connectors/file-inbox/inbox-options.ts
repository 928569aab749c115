import { z } from 'zod';

/**
 * Where a file inbox lives and how finished files are retired. Shared by the local `inbox`
 * connector and the `sftp` connector's `inbox` block; the sub-folders default to children of `dir`.
 */
export const inboxShape = {
  /** Folder the ERP drops request files into. */
  dir: z.string().min(1),
  /** File-name glob (`*` and `?`) of request files, or a list of them: `*.csv`, `[loads-*.json, '*.csv']`. */
  pattern: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).default('*.csv'),
  processingDir: z.string().min(1).optional(),
  processedDir: z.string().min(1).optional(),
  failedDir: z.string().min(1).optional(),
  /**
   * `stable` (default): a file is complete when a `<file>.done` marker exists, or when its size
   * and modification time are unchanged between two consecutive polls. `marker`: only files with
   * a `<file>.done` marker are read (for writers that cannot write atomically and are slow).
   */
  readyWhen: z.enum(['stable', 'marker']).default('stable'),
  /** CSV request files: field separator and text encoding. */
  delimiter: z.string().min(1).max(4).default(','),
  encoding: z.enum(['utf8', 'utf16le', 'latin1']).default('utf8'),
  /** A CSV record longer than this (characters) is reported as that row's problem instead of being read. */
  maxRecordLength: z.number().int().positive().default(1_000_000),
  /** Files read per poll; the rest wait for the next one. */
  maxFilesPerTake: z.number().int().positive().default(100),
};

const inboxObject = z.object(inboxShape).strict();
export const inboxOptionsSchema = inboxObject;
export type InboxOptions = z.output<typeof inboxObject>;

/** The four folders of an inbox, resolved. */
export interface InboxFolders {
  readonly dir: string;
  readonly processing: string;
  readonly processed: string;
  readonly failed: string;
}

export function inboxFolders(options: InboxOptions, resolve: (dir: string) => string, join: (dir: string, name: string) => string): InboxFolders {
  const dir = resolve(options.dir);
  return {
    dir,
    processing: options.processingDir ? resolve(options.processingDir) : join(dir, 'processing'),
    processed: options.processedDir ? resolve(options.processedDir) : join(dir, 'processed'),
    failed: options.failedDir ? resolve(options.failedDir) : join(dir, 'failed'),
  };
}
