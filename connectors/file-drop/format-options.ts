import { z } from 'zod';
import { booleanValue } from '../../src/util/zod-values.js';

/**
 * The CSV format and publishing options every file-drop connector shares (`csv`, `sftp`). A
 * connector spreads `csvFormatShape` into its own strict object and adds `checkCsvFormat` as a
 * refinement, so one option means the same thing, with the same default, everywhere.
 */
export const csvFormatShape = {
  delimiter: z.string().min(1).max(4).default(','),
  /** Byte order mark at the start of each file (utf8 and utf16le only; latin1 has none). */
  bom: booleanValue().default(false),
  /** RFC 4180 says CRLF. */
  lineEnding: z.enum(['lf', 'crlf']).default('crlf'),
  quote: z.string().length(1).default('"'),
  /** `auto` quotes only fields that need it (delimiter, quote, CR or LF inside). */
  quoted: z.enum(['auto', 'all']).default('auto'),
  encoding: z.enum(['utf8', 'utf16le', 'latin1']).default('utf8'),
  /**
   * Spreadsheet formula injection guard: a text cell starting with `=`, `+`, `-`, `@`, tab or CR
   * gets a leading `'`. `text`: not for plain numbers (`-12.50`); `all`: every such cell; `off`: none.
   */
  formulaEscape: z.enum(['text', 'all', 'off']).default('text'),
  header: booleanValue().default(true),
  /**
   * Written LAST, after every file of a batch is in place: `<batch>.manifest.json` (files, row
   * counts, sha256), an empty `<batch>.done`, or nothing. A consumer takes only batches with one.
   */
  marker: z
    .enum(['none', 'done', 'manifest'])
    .default('manifest')
    .describe('Written last for each batch: <batch>.manifest.json (files, row counts, sha256), an empty <batch>.done, or nothing.'),
  /**
   * Old batches deleted after each publish, whole (marker first): by age and/or by data-file
   * count. On by default (30 days); `false` keeps everything.
   */
  retention: z
    .union([
      z.literal(false),
      z
        .object({
          maxAgeDays: z.number().positive().optional(),
          maxFiles: z.number().int().positive().optional(),
        })
        .strict(),
    ])
    .default({ maxAgeDays: 30 })
    .describe('Old batches deleted whole after each publish, by age (maxAgeDays) and/or data-file count (maxFiles); false keeps everything.'),
  /**
   * A batch is published at the end of every run, or earlier once one of its tables has this many
   * rows (so one run writes a few large files, not one per page).
   */
  maxBatchRows: z
    .number()
    .int()
    .min(1)
    .max(10_000_000)
    .default(10_000)
    .describe('A batch is published when one of its tables reaches this many rows, and in any case at the end of every run.'),
  /**
   * What to do with a record that fails to map: `file` (the historical name; no file is written
   * any more) leaves it out and names it in the acknowledgement, so the engine quarantines and
   * re-delivers it; `fail` rejects the whole batch (the stream stops until fixed).
   */
  onMappingError: z.enum(['file', 'fail']).default('file'),
};

const formatObject = z.object(csvFormatShape);
export type CsvFormat = z.output<typeof formatObject>;

/** Cross-field rules of the format options. */
export function checkCsvFormat(options: Pick<CsvFormat, 'delimiter' | 'quote' | 'bom' | 'encoding'>, ctx: z.RefinementCtx): void {
  if (options.delimiter === options.quote) ctx.addIssue({ code: 'custom', path: ['delimiter'], message: 'must differ from quote' });
  if (/[\r\n]/.test(options.delimiter)) ctx.addIssue({ code: 'custom', path: ['delimiter'], message: 'must not contain CR or LF' });
  if (options.bom && options.encoding === 'latin1') ctx.addIssue({ code: 'custom', path: ['bom'], message: 'latin1 has no byte order mark' });
}
