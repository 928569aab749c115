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
  fields: Record<string, unknown>;
  files: UploadedFile[];
}

/**
 * Reads a request body: JSON, or multipart / url-encoded form (the brokerage documentation says
 * its calls are multipart). Form fields are strings; a field that looks like JSON stays a string.
 */
export async function readBody(req: IncomingMessage): Promise<ParsedBody> {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('multipart/form-data') || type.startsWith('application/x-www-form-urlencoded')) {
    return readForm(req);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(400, 'request body too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { kind: 'empty', fields: {}, files: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'request body is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new HttpError(400, 'request body must be a JSON object');
  return { kind: 'json', fields: parsed as Record<string, unknown>, files: [] };
}

function readForm(req: IncomingMessage): Promise<ParsedBody> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: MAX_BODY_BYTES } });
    } catch (error) {
      reject(new HttpError(400, `malformed form body: ${(error as Error).message}`));
      return;
    }
    const fields: Record<string, unknown> = {};
    const files: UploadedFile[] = [];
    parser.on('field', (name, value) => {
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
    parser.on('close', () => resolve({ kind: 'form', fields, files }));
    req.pipe(parser);
  });
}
