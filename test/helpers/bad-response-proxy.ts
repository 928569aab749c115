import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP proxy in front of the simulator that spoils chosen answers, for the bad-input
 * corpus (test/fixtures/bad-input/api). Everything else passes through byte for byte.
 */
export type Spoil =
  /** Change one element of `data` (a list): set fields, remove fields, or replace it whole. */
  | { kind: 'element'; index: number; set?: Record<string, unknown>; unset?: string[]; replace?: unknown }
  /** Change the envelope: set or remove top-level fields (`data` included). */
  | { kind: 'envelope'; set?: Record<string, unknown>; unset?: string[] }
  /** Answer with this status, content type and file instead of the server's answer. */
  | { kind: 'replace'; status: number; contentType: string; bodyFile: string }
  /** Send half the body under the full Content-Length, then cut the connection. */
  | { kind: 'truncate' };

export interface SpoilRule {
  /** `GET /loads` — method and path below the base URL, query ignored. */
  route: string;
  /** Leave this many matching answers alone first. */
  after?: number;
  /** How many answers to spoil; 'always' for every one. */
  times: number | 'always';
  spoil: Spoil;
}

export interface SpoiledElement {
  route: string;
  /** The element's key fields before it was spoiled, to know which record was affected. */
  original: Record<string, unknown>;
}

export interface BadResponseProxy {
  readonly baseUrl: string;
  /** Answers spoiled so far. */
  readonly spoiled: number;
  readonly elements: SpoiledElement[];
  close(): Promise<void>;
}

const KEY_FIELDS = ['_id', 'reference_number', 'billId', 'supportMoveNumber'];

export async function startBadResponseProxy(upstreamBaseUrl: string, rules: readonly SpoilRule[], fixtureDir: string): Promise<BadResponseProxy> {
  const upstream = new URL(upstreamBaseUrl);
  const prefix = upstream.pathname.replace(/\/+$/, '');
  const seen = new Map<SpoilRule, number>();
  const elements: SpoiledElement[] = [];
  let spoiled = 0;

  const pick = (method: string, pathname: string): SpoilRule | undefined => {
    const route = `${method} ${pathname.startsWith(prefix) ? pathname.slice(prefix.length) : pathname}`;
    for (const rule of rules) {
      if (rule.route !== route) continue;
      const n = (seen.get(rule) ?? 0) + 1;
      seen.set(rule, n);
      const first = (rule.after ?? 0) + 1;
      if (n >= first && (rule.times === 'always' || n < first + rule.times)) return rule;
    }
    return undefined;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', upstream);
      const rule = pick(req.method ?? 'GET', url.pathname);
      const forward = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            const original = Buffer.concat(body);
            const headers = { ...answer.headers };
            delete headers['content-length'];
            delete headers['transfer-encoding'];
            if (!rule || (answer.statusCode ?? 500) >= 300) {
              res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': original.length });
              res.end(original);
              return;
            }
            spoiled += 1;
            const spoil = rule.spoil;
            if (spoil.kind === 'truncate') {
              res.writeHead(answer.statusCode ?? 200, { ...headers, 'content-length': original.length });
              res.write(original.subarray(0, Math.floor(original.length / 2)));
              setTimeout(() => res.destroy(), 20);
              return;
            }
            if (spoil.kind === 'replace') {
              const text = fs.readFileSync(`${fixtureDir}/${spoil.bodyFile}`);
              res.writeHead(spoil.status, { date: headers['date'] ?? new Date().toUTCString(), 'content-type': spoil.contentType, 'content-length': text.length });
              res.end(text);
              return;
            }
            const json = JSON.parse(original.toString('utf8')) as Record<string, unknown>;
            if (spoil.kind === 'envelope') {
              for (const f of spoil.unset ?? []) delete json[f];
              Object.assign(json, spoil.set ?? {});
            } else if (Array.isArray(json['data']) && json['data'].length > spoil.index) {
              const list = json['data'] as unknown[];
              const element = list[spoil.index] as Record<string, unknown>;
              elements.push({ route: rule.route, original: Object.fromEntries(KEY_FIELDS.filter((k) => k in element).map((k) => [k, element[k]])) });
              if ('replace' in spoil) list[spoil.index] = spoil.replace;
              else {
                const changed = { ...element, ...(spoil.set ?? {}) };
                for (const f of spoil.unset ?? []) delete changed[f];
                list[spoil.index] = changed;
              }
            }
            const text = Buffer.from(JSON.stringify(json));
            res.writeHead(answer.statusCode ?? 200, { ...headers, 'content-length': text.length });
            res.end(text);
          });
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${prefix}`,
    get spoiled() {
      return spoiled;
    },
    elements,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
