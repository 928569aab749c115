import { z } from 'zod';
import { inboxShape } from '../file-inbox/inbox-options.js';

/** Options of a `type: inbox` connector: a local folder of request files (relative to the config file's folder). */
export const localInboxOptionsSchema = z.object(inboxShape).strict();

export type LocalInboxOptions = z.output<typeof localInboxOptionsSchema>;
export type LocalInboxOptionsInput = z.input<typeof localInboxOptionsSchema>;
