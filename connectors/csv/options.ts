import { z } from 'zod';
import { checkCsvFormat, csvFormatShape } from '../file-drop/format-options.js';

/** Options of a `type: csv` connector (`connectors.<name>.options`): a folder plus the shared CSV format. */
export const csvOptionsSchema = z
  .object({
    /** Output folder; relative paths resolve against the config file's folder. */
    directory: z.string().min(1),
    ...csvFormatShape,
  })
  .strict()
  .superRefine(checkCsvFormat);

export type CsvOptions = z.output<typeof csvOptionsSchema>;
export type CsvOptionsInput = z.input<typeof csvOptionsSchema>;
