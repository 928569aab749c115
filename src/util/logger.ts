import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import pino, { type Logger, type LevelWithSilent } from 'pino';
import { dedupeCallBindings, dedupeChildBindings } from './log-bindings.js';
import { isExpectedFailure, messageNamingCauses, serializeLogError } from './log-errors.js';
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

/**
 * pino-pretty for a terminal: one line per event (`20:38:10.625 ERROR (api): message {"stream":…}`),
 * without the fields every line shares. Errors print as their message through the serializer
 * (an unexpected error still brings its stack, on the following lines).
 */
const PRETTY_OPTIONS = {
  colorize: true,
  singleLine: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,app,component',
  messageFormat: '{if component}({component}) {end}{msg}',
  errorLikeObjectKeys: ['err'],
} as const;

/**
 * The fields of a log call as a terminal shows them: null and undefined dropped (`error: null` is
 * noise) and an expected failure as its message, so the event stays on one line. Unexpected
 * errors keep their serialized stack.
 */
function terminalFields(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    if (value === null || value === undefined) continue;
    if (!(value instanceof Error)) out[key] = value;
    // pino-pretty prints `err` (its error-like key) as a block with the stack, on the next lines.
    else if (isExpectedFailure(value)) out[key === 'err' && !('error' in object) ? 'error' : key] = messageNamingCauses(value);
    else out[key === 'error' && !('err' in object) ? 'err' : key] = value;
  }
  return out;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? (process.env.FREIGHT_SYNC_LOG_LEVEL as LevelWithSilent | undefined) ?? 'info';
  const target = options.destination ?? process.stderr;
  const pretty = options.pretty ?? (target === process.stderr && process.stderr.isTTY === true);
  let destination: NodeJS.WritableStream = target;
  let prettyActive = false;
  if (pretty) {
    // pino-pretty is loaded lazily so the production image can omit it without breaking JSON logs.
    try {
      const prettyFactory = moduleRequire('pino-pretty') as (opts: object) => NodeJS.WritableStream;
      destination = prettyFactory({ destination: target, ...PRETTY_OPTIONS });
      prettyActive = true;
    } catch {
      destination = target;
    }
  }
  const logger = pino(
    {
      level,
      base: { app: 'freight-sync' },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: { err: serializeLogError, error: serializeLogError },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { logMethod: dedupeCallBindings },
      // JSON keeps its fields stable (a report line always has `error`); a terminal shows what is set.
      ...(prettyActive ? { formatters: { log: terminalFields } } : {}),
    },
    scrubbingDestination(destination),
  );
  dedupeChildBindings(logger);
  return logger;
}

/** A logger that discards everything, for library use and tests that do not inspect logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
