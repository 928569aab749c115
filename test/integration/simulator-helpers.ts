import { startSimulator, type SimulatorHandle, type SimulatorOptions } from '../../src/simulator/index.js';

export interface Api {
  sim: SimulatorHandle;
  token: string;
  refresh: string;
  get(path: string): Promise<{ status: number; headers: Headers; body: any }>;
  send(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }>;
}

export async function retrieveToken(sim: SimulatorHandle): Promise<{ access: string; refresh: string }> {
  const res = await fetch(`${sim.baseUrl}/retrieve-token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientId: sim.options.clientId, clientSecret: sim.options.clientSecret }),
  });
  const body = (await res.json()) as any;
  return { access: body.data.access_token, refresh: body.data.refresh_token };
}

/** Starts a simulator and logs in; tests talk to it with plain fetch. */
export async function startApi(options: Partial<SimulatorOptions> = {}): Promise<Api> {
  const sim = await startSimulator(options);
  const { access, refresh } = await retrieveToken(sim);
  const api: Api = {
    sim,
    token: access,
    refresh,
    async get(path) {
      return api.send('GET', path);
    },
    async send(method, path, body) {
      const res = await fetch(`${sim.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${api.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // leave as text
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
  };
  return api;
}

export function q(params: Record<string, string | number | boolean | string[]>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) for (const v of value) search.append(key, v);
    else search.append(key, String(value));
  }
  return `?${search.toString()}`;
}
