import { promisify } from 'node:util';
import zlib from 'node:zlib';

const unzip = promisify(zlib.unzip);
const brotliDecompress = promisify(zlib.brotliDecompress);

// A body cut short decodes to what arrived instead of failing (as axios did: sync flush at the end).
const ZLIB_OPTIONS = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BROTLI_OPTIONS = { flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH };

/** Sent with every request: the encodings `decodeResponseBody` undoes. */
export const ACCEPT_ENCODING = 'gzip, compress, deflate, br';

/** How a body in a `Content-Encoding` is turned back into its bytes; undefined: kept as it is. */
export function decoderFor(contentEncoding: string | undefined): ((body: Buffer) => Promise<Buffer>) | undefined {
  switch (contentEncoding?.toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
    case 'compress':
    case 'x-compress':
      return (body) => unzip(body, ZLIB_OPTIONS);
    case 'deflate':
      // Servers send `deflate` both with and without its zlib header; a raw one gets a header.
      return (body) => unzip(body.length > 0 && body[0] !== 0x78 ? Buffer.concat([ZLIB_HEADER, body]) : body, ZLIB_OPTIONS);
    case 'br':
      return (body) => brotliDecompress(body, BROTLI_OPTIONS);
    default:
      return undefined;
  }
}

const ZLIB_HEADER = Buffer.from([0x78, 0x9c]);
