import type { IncomingMessage } from 'node:http';
import { FreightSyncError } from '../util/errors.js';

/** The body is over `maxBodyBytes`: answered 413, nothing read further or stored. */
export class BodyTooLargeError extends FreightSyncError {
  constructor(limit: number) {
    super('WEBHOOK_BODY_TOO_LARGE', `request body is over the ${limit}-byte limit`);
  }
}

export function isBodyTooLargeError(error: unknown): error is BodyTooLargeError {
  return error instanceof BodyTooLargeError;
}

/**
 * Reads the raw body as bytes (the signature is over the exact bytes sent). A declared
 * Content-Length over the limit is refused before reading; a chunked body is cut off as soon as
 * it passes the limit, so a large upload cannot fill memory.
 */
export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(new BodyTooLargeError(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks, size));
    });
    req.on('error', (error) => {
      if (done) return;
      done = true;
      reject(error);
    });
  });
}
