import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerClock } from './clock.js';
import type { SimDocuments } from './documents.js';
import { writeResponse } from './http-io.js';
import type { SimulatorStats } from './stats.js';

/**
 * The object storage document URLs point at: `GET <path>` streams the file (Content-Length, no
 * auth, like a pre-signed URL). Unknown or removed documents answer 404; `documents.failNext`
 * answers 503 to that many downloads. A request carrying an `Authorization` header is counted:
 * a client must never send its API token to a host that is not the API.
 */
export function createDocumentStorageHandler(documents: SimDocuments, clock: ServerClock, stats: () => SimulatorStats) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const counters = stats();
    counters.documentDownloads++;
    if (req.headers.authorization !== undefined) counters.documentDownloadsWithAuthorization++;
    req.resume();
    const doc = documents.at(path);
    if (req.method !== 'GET') return writeResponse(res, clock, 405, JSON.stringify({ error: 'only GET' }));
    if (!doc || doc.removed) return writeResponse(res, clock, 404, JSON.stringify({ error: `no document at ${path}` }));
    if (documents.failNext > 0) {
      documents.failNext--;
      return writeResponse(res, clock, 503, JSON.stringify({ error: 'storage temporarily unavailable' }));
    }
    res.statusCode = 200;
    res.setHeader('Date', clock.now().toUTCString());
    res.setHeader('Content-Type', 'application/pdf');
    res.setHeader('Content-Length', doc.bytes);
    for (const block of documents.content(doc)) {
      if (res.destroyed) return;
      if (!res.write(block)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
    }
    res.end();
  };
}
