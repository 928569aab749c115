import { z } from 'zod';
import { parseIsoDuration } from '../../src/util/duration.js';
import { booleanValue } from '../../src/util/zod-values.js';
import { checkCsvFormat, csvFormatShape } from '../file-drop/format-options.js';
import { inboxShape } from '../file-inbox/inbox-options.js';

/** Milliseconds, or an ISO 8601 duration like the rest of the config (`PT10S`). */
const duration = (fallback: number) =>
  z
    .union([z.number().int().nonnegative(), z.string()])
    .default(fallback)
    .transform((value, ctx) => {
      if (typeof value === 'number') return value;
      const ms = parseIsoDuration(value);
      if (ms === undefined) {
        ctx.addIssue({ code: 'custom', message: `"${value}" is not a duration (milliseconds, or ISO 8601 such as PT10S)` });
        return z.NEVER;
      }
      return ms;
    });

/** The form `ssh-keygen -lf` and `ssh` print: `SHA256:` and 43 characters of unpadded base64. */
export const FINGERPRINT_PATTERN = /^SHA256:[A-Za-z0-9+/]{43}=?$/;

/** Options of a `type: sftp` connector: the connection, the shared CSV format, an optional inbox. */
export const sftpOptionsSchema = z
  .object({
    host: z.string().min(1),
    port: z.number().int().min(1).max(65_535).default(22),
    username: z.string().min(1),
    password: z.string().min(1).optional(),
    /** Inline PEM/OpenSSH key; use `${SFTP_PRIVATE_KEY}` to take it from the environment. */
    privateKey: z.string().min(1).optional(),
    /** Key file; relative to the config file's folder. */
    privateKeyPath: z.string().min(1).optional(),
    passphrase: z.string().min(1).optional(),
    /** Pinned host key fingerprint, e.g. from `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub`. */
    hostKeySha256: z.string().regex(FINGERPRINT_PATTERN, 'must look like SHA256:<43 base64 characters> (as ssh-keygen -l prints it)').optional(),
    /** Accept any host key (logs a warning on every connect). Only for a first look at a test server. */
    allowUnpinnedHostKey: booleanValue().default(false),
    /** Remote folder of the drop (sink); relative paths start at the login directory. */
    remoteDir: z.string().min(1).optional(),
    ...csvFormatShape,
    maxParallelTransfers: z.number().int().min(1).max(16).default(2),
    keepaliveInterval: duration(10_000),
    readyTimeout: duration(20_000),
    reconnect: z
      .object({
        attempts: z.number().int().min(0).max(100).default(5),
        baseDelay: duration(1_000),
        maxDelay: duration(30_000),
      })
      .strict()
      .prefault({}),
    /** Poll a remote folder for request files (the connector is then also a source). */
    inbox: z.object(inboxShape).strict().optional(),
  })
  .strict()
  .superRefine((options, ctx) => {
    checkCsvFormat(options, ctx);
    if (!options.password && !options.privateKey && !options.privateKeyPath) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'give password, privateKey or privateKeyPath' });
    }
    if (options.privateKey && options.privateKeyPath) {
      ctx.addIssue({ code: 'custom', path: ['privateKeyPath'], message: 'give either privateKey or privateKeyPath, not both' });
    }
    if (!options.hostKeySha256 && !options.allowUnpinnedHostKey) {
      ctx.addIssue({
        code: 'custom',
        path: ['hostKeySha256'],
        message: 'is required: pin the server key (ssh-keygen -lf <host key>.pub prints SHA256:…), or set allowUnpinnedHostKey: true to accept any key (unsafe)',
      });
    }
    if (!options.remoteDir && !options.inbox) {
      ctx.addIssue({ code: 'custom', path: ['remoteDir'], message: 'give remoteDir (drop records), inbox (read requests), or both' });
    }
  });

export type SftpOptions = z.output<typeof sftpOptionsSchema>;
export type SftpOptionsInput = z.input<typeof sftpOptionsSchema>;
