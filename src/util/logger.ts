import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import pino, { type Logger, type LevelWithSilent } from 'pino';
import { scrubSecrets } from './secrets.js';

export type { Logger } from 'pino';

const moduleRequire = createRequire(import.meta.url);

/** Paths pino redacts by field name, at any depth we log. */
const REDACT_PATHS = [
  'password', '*.password', '*.*.password',
  'secret', '*.secret', '*.*.secret',
  'clientSecret', '*.clientSecret', '*.*.clientSecret',
  'token', '*.token', '*.*.token',
  'accessToken', '*.accessToken', '*.*.accessToken',
  'refreshToken', '*.refreshToken', '*.*.refreshToken',
  'access_token', '*.access_token', '*.*.access_token',
  'refresh_token', '*.refresh_token', '*.*.refresh_token',
  'authorization', '*.authorization', '*.*.authorization', '*.headers.authorization',
  'Authorization', '*.Authorization', '*.*.Authorization', '*.headers.Authorization',
  'privateKey', '*.privateKey', '*.*.privateKey',
  'passphrase', '*.passphrase', '*.*.passphrase',
];

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Human-readable output (pino-pretty). Defaults to true when stderr is a TTY. */
  pretty?: boolean;
  /** Where lines go; defaults to stderr so stdout stays free for command output. */
  destination?: NodeJS.WritableStream;
}

/** A destination that masks registered secrets in every line before it is written. */
export function scrubbingDestination(target: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      target.write(scrubSecrets(chunk.toString()), callback);
    },
  });
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? (process.env.FREIGHT_SYNC_LOG_LEVEL as LevelWithSilent | undefined) ?? 'info';
  const target = options.destination ?? process.stderr;
  const pretty = options.pretty ?? (target === process.stderr && process.stderr.isTTY === true);
  let destination: NodeJS.WritableStream = target;
  if (pretty) {
    // pino-pretty is loaded lazily so the production image can omit it without breaking JSON logs.
    try {
      const prettyFactory = moduleRequire('pino-pretty') as (opts: object) => NodeJS.WritableStream;
      const prettyStream = prettyFactory({ destination: target, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
      destination = prettyStream;
    } catch {
      destination = target;
    }
  }
  return pino(
    {
      level,
      base: { app: 'freight-sync' },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    scrubbingDestination(destination),
  );
}


/** A logger that discards everything, for library use and tests that do not inspect logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
