import { z } from 'zod';
import { integerValue, isoDuration } from '../../util/zod-values.js';

/** 50 MiB: larger than any POD/BOL scan seen, small enough that a runaway URL cannot fill a disk. */
export const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;

const SAFE_FOLDER = /^(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._\-/]+$/;

/** `sync.streams.documentFiles.options` (docs/connectors.md, Document files). */
export const documentFilesOptionsSchema = z.strictObject({
  /** Connector that stores the files (its `files` capability: `csv` folder, `sftp` remoteDir). */
  filesTo: z.string().min(1, 'names the connector that stores the files (a csv or sftp connector)'),
  /** Folder inside that connector's directory. */
  folder: z
    .string()
    .regex(SAFE_FOLDER, 'must be a relative folder without "." or ".." segments')
    .refine((f) => !f.startsWith('/'), 'must be relative to the connector directory')
    .default('documents'),
  /** Larger files are not stored: their record is quarantined with the size as the reason. */
  maxBytes: integerValue(1, Number.MAX_SAFE_INTEGER).default(DEFAULT_MAX_BYTES),
  /** Tries per file before the run fails (network errors, 5xx, 408, 429). */
  downloadAttempts: integerValue(1, 20).default(5),
  /** First wait between tries; doubles each time (full jitter), at most 30 s. */
  retryDelay: isoDuration().prefault('PT1S'),
  /** Wait for the response headers of one download. */
  downloadTimeout: isoDuration().prefault('PT60S'),
  /** Downloads at once. */
  parallelDownloads: integerValue(1, 16).default(4),
});

export type DocumentFilesOptions = z.infer<typeof documentFilesOptionsSchema>;
