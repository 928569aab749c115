import type { ApiClient } from './api-client.js';
import { FreightSyncError } from '../util/errors.js';
import { scrubSecrets } from '../util/secrets.js';
import { isAbortError } from '../util/abort.js';

const MAX_REDIRECTS = 5;

/** A document URL for messages: origin and path, never the query (pre-signed URLs carry credentials there). */
export function describeDocumentUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return scrubSecrets(`${parsed.origin}${parsed.pathname}`);
  } catch {
    return '(not a URL)';
  }
}

/** A download that did not deliver the file. `retryable`: a network error, a 5xx, 408 or 429. */
export class DocumentDownloadError extends FreightSyncError {
  readonly retryable: boolean;
  readonly status: number | null;

  constructor(url: string, detail: string, options: { status: number | null; retryable: boolean; cause?: unknown }) {
    super(options.status === null ? 'DOCUMENT_DOWNLOAD' : `DOCUMENT_HTTP_${options.status}`, `GET ${describeDocumentUrl(url)}: ${scrubSecrets(detail)}`, { cause: options.cause });
    this.retryable = options.retryable;
    this.status = options.status;
  }
}

/** The file is larger than the configured limit (announced by Content-Length, or found while reading). */
export class DocumentTooLargeError extends FreightSyncError {
  constructor(url: string, readonly bytes: number, readonly maxBytes: number, announced: boolean) {
    super('DOCUMENT_TOO_LARGE', `GET ${describeDocumentUrl(url)}: the file ${announced ? 'is' : 'has more than'} ${bytes} bytes, over the limit of ${maxBytes} bytes (documentFiles maxBytes)`);
  }
}

export interface OpenedDocument {
  /** The bytes as they arrive; reading stops with `DocumentTooLargeError` past `maxBytes`. */
  body: AsyncIterable<Uint8Array>;
  contentType: string | null;
}

/**
 * The token rule: a download carries `Authorization: Bearer <access token>` only when its URL has
 * the API's own origin (scheme, host and port of `api.baseUrl`). Document URLs usually point at
 * object storage on another host (pre-signed URLs need no token), and a token sent there would
 * be handed to a third party. The rule is applied again at every redirect hop.
 */
export function sendsApiToken(apiBaseUrl: string, url: string): boolean {
  return new URL(url).origin === new URL(apiBaseUrl).origin;
}

/**
 * Opens a document file for streaming. Redirects are followed by hand (at most 5) so the token
 * rule holds at each hop; a 401 from the API's own origin refreshes the token once. Only `http:`
 * and `https:` URLs are fetched. `timeoutMs` bounds the wait for the response headers; the body
 * then streams for as long as it keeps arriving, and `signal` aborts it.
 */
export async function openDocument(client: ApiClient, url: string, options: { maxBytes: number; timeoutMs: number }, signal: AbortSignal): Promise<OpenedDocument> {
  let current = url;
  let refreshed = false;
  for (let hop = 0; ; hop++) {
    let parsed: URL;
    try {
      parsed = new URL(current);
    } catch {
      throw new DocumentDownloadError(url, 'the document URL is not a valid absolute URL', { status: null, retryable: false });
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new DocumentDownloadError(current, `only http and https URLs are downloaded, not ${parsed.protocol}`, { status: null, retryable: false });
    }
    const bearer = sendsApiToken(client.baseUrl, current) ? await client.tokens.accessToken(signal) : undefined;
    const response = await fetchHeaders(current, bearer, options.timeoutMs, signal);
    if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
      await response.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw new DocumentDownloadError(url, `more than ${MAX_REDIRECTS} redirects`, { status: response.status, retryable: false });
      current = new URL(response.headers.get('location')!, current).toString();
      continue;
    }
    if (response.status === 401 && bearer && !refreshed) {
      await response.body?.cancel();
      refreshed = true;
      await client.tokens.onUnauthorized(bearer, signal);
      continue;
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
      throw new DocumentDownloadError(current, `HTTP ${response.status}`, { status: response.status, retryable });
    }
    const announced = Number(response.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(announced) && announced > options.maxBytes) {
      await response.body?.cancel();
      throw new DocumentTooLargeError(current, announced, options.maxBytes, true);
    }
    return { body: limited(current, response, options.maxBytes), contentType: response.headers.get('content-type') };
  }
}

async function fetchHeaders(url: string, bearer: string | undefined, timeoutMs: number, signal: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { 'User-Agent': 'freight-sync' };
  if (bearer) headers['Authorization'] = `Bearer ${bearer}`;
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    // The timeout only covers the headers: the body of a large file may take longer.
    return await Promise.race([
      fetch(url, { headers, redirect: 'manual', signal }),
      new Promise<never>((_, reject) => timeout.addEventListener('abort', () => reject(timeout.reason), { once: true })),
    ]);
  } catch (error) {
    if (signal.aborted) throw error;
    const detail = timeout.aborted ? `no answer within ${timeoutMs} ms` : describeCause(error);
    throw new DocumentDownloadError(url, detail, { status: null, retryable: true, cause: error });
  }
}

async function* limited(url: string, response: Response, maxBytes: number): AsyncGenerator<Uint8Array> {
  if (!response.body) return;
  let bytes = 0;
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) throw new DocumentTooLargeError(url, maxBytes, maxBytes, false);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof DocumentTooLargeError || isAbortError(error)) throw error;
    throw new DocumentDownloadError(url, `the body broke off after ${bytes} bytes: ${describeCause(error)}`, { status: 200, retryable: true, cause: error });
  }
}

function describeCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

export function isDocumentTooLarge(error: unknown): error is DocumentTooLargeError {
  return error instanceof DocumentTooLargeError;
}

export function isDocumentDownloadError(error: unknown): error is DocumentDownloadError {
  return error instanceof DocumentDownloadError;
}
