import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/util/logger.js';

/** A real pino logger (with the production redaction and scrubbing) whose lines are kept for assertions. */
export function capturingLogger(level: 'trace' | 'debug' | 'info' = 'trace'): { logger: Logger; lines: string[]; text: () => string } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      callback();
    },
  });
  const logger = createLogger({ level, pretty: false, destination });
  return { logger, lines, text: () => lines.join('\n') };
}
