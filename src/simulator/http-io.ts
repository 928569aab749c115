import type { ServerResponse } from 'node:http';
import type { ServerClock } from './clock.js';

/** Writes a response with the server-clock `Date` header every answer must carry. */
export function writeResponse(
  res: ServerResponse,
  clock: ServerClock,
  status: number,
  body: string,
  headers: Record<string, string> = {},
  contentType = 'application/json; charset=utf-8',
): void {
  if (res.destroyed || res.headersSent) return;
  res.statusCode = status;
  res.setHeader('Date', clock.now().toUTCString());
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  for (const [key, value] of Object.entries(headers)) res.setHeader(key, value);
  res.end(body);
}

/**
 * A 200 whose JSON is cut short. Either the Content-Length is honest about the cut (the response
 * looks complete but does not parse), or it promises the full length and the socket closes mid-body.
 */
export function writeTruncated(res: ServerResponse, clock: ServerClock, body: string, cutAt: number, honestLength: boolean): void {
  const bytes = Buffer.from(body);
  const part = bytes.subarray(0, cutAt);
  res.statusCode = 200;
  res.setHeader('Date', clock.now().toUTCString());
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', honestLength ? part.length : bytes.length);
  if (honestLength) {
    res.end(part);
    return;
  }
  res.write(part, () => {
    // Give the partial body a moment to leave, then cut the connection.
    setTimeout(() => res.socket?.destroy(), 10);
  });
}

export function delay(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
