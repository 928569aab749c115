import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { HttpError } from './http-error.js';

const MAX_BODY_BYTES = 20 * 1024 * 1024;

export interface UploadedFile {
  field: string;
  filename: string;
  mimeType: string;
  size: number;
}

export interface ParsedBody {
  kind: 'json' | 'form' | 'empty';
  /** The media type of the request (`multipart/form-data`, `application/json`, …), '' when none. */
  mediaType: string;
  fields: Record<string, unknown>;
  files: UploadedFile[];
}

/**
 * Reads a request body: JSON, or multipart / url-encoded form (the brokerage documentation says
 * its calls are multipart). Form fields decode as the client encodes them (src/api/request-body.ts):
 * a part marked `Content-Type: application/json` is parsed as JSON, any other part stays a string
 * (a text field that merely looks like JSON stays a string); repeated names make an array.
 */
export async function readBody(req: IncomingMessage): Promise<ParsedBody> {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  const mediaType = type.split(';')[0]!.trim();
  if (mediaType === 'multipart/form-data' || mediaType === 'application/x-www-form-urlencoded') {
    return readForm(req, mediaType);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(400, 'request body too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { kind: 'empty', mediaType, fields: {}, files: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'request body is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new HttpError(400, 'request body must be a JSON object');
  return { kind: 'json', mediaType, fields: parsed as Record<string, unknown>, files: [] };
}

function readForm(req: IncomingMessage, mediaType: string): Promise<ParsedBody> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: MAX_BODY_BYTES, fieldSize: MAX_BODY_BYTES } });
    } catch (error) {
      reject(new HttpError(400, `malformed form body: ${(error as Error).message}`));
      return;
    }
    const fields: Record<string, unknown> = {};
    const files: UploadedFile[] = [];
    let failure: HttpError | undefined;
    parser.on('field', (name, text, info) => {
      let value: unknown = text;
      if (info.mimeType === 'application/json') {
        try {
          value = JSON.parse(text);
        } catch {
          failure ??= new HttpError(400, `form field ${name} is marked application/json but is not valid JSON`);
          return;
        }
      }
      const existing = fields[name];
      if (existing === undefined) fields[name] = value;
      else fields[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
    });
    parser.on('file', (field, stream, info) => {
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
      });
      stream.on('end', () => files.push({ field, filename: info.filename ?? '', mimeType: info.mimeType, size }));
    });
    parser.on('error', (error: Error) => reject(new HttpError(400, `malformed form body: ${error.message}`)));
    parser.on('close', () => (failure ? reject(failure) : resolve({ kind: 'form', mediaType, fields, files })));
    req.pipe(parser);
  });
}
