import type { AppContext } from '../../src/app/compose.js';
import { resolveParties } from '../../src/outbound/resolve-parties.js';
import { enqueue, createCommand } from './outbox-rows.js';

export const CONSOLE_USER = 'ops';
export const CONSOLE_PASSWORD = 'console-pw-7f3a91';

/** `Authorization` of the console's basic credentials (or others). */
export function basicAuth(username = CONSOLE_USER, password = CONSOLE_PASSWORD): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** The `http.console` block of a test config (basic auth). */
export function consoleRaw(): Record<string, unknown> {
  return { enabled: true, auth: { basic: { username: CONSOLE_USER, password: CONSOLE_PASSWORD } } };
}

/**
 * A dead letter as the dispatcher leaves one after the API refused a create: a create whose ERP
 * customer codes intake resolved to the simulator's ids (so a retry can succeed, once customers
 * are synced), marked dead with an API error. Unresolved codes stay as they are.
 */
export async function seedDeadLetter(app: AppContext, erpKey: string): Promise<number> {
  const command = createCommand(erpKey, { caller: 'CUS000001', shipper: ['CUS000002'] });
  const resolved = await resolveParties(command, app.stores.directory);
  const id = await enqueue(app.stores.outbox, resolved.ok ? resolved.command : command);
  await app.stores.outbox.markDead(id, 'the API rejected it (HTTP 400): caller is temporarily locked');
  return id;
}

/** A finished run of `stream` with the given error and end lag. */
export async function seedRun(app: AppContext, stream: string, outcome: { status: 'ok' | 'failed'; records: number; requests: number; error?: string; lagSeconds?: number }): Promise<number> {
  const id = await app.stores.runs.start(stream, 'run');
  await app.stores.runs.finish(id, { status: outcome.status, records: outcome.records, pages: 1, requests: outcome.requests, error: outcome.error ?? null, lagSeconds: outcome.lagSeconds ?? null, checkpointAt: new Date().toISOString() });
  return id;
}

/** The CSRF token of the forms of a console page. */
export function csrfTokenOf(page: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('no csrf token on the page');
  return match[1]!;
}
