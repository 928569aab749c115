import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { markPreparable, preparingClient } from '../../connectors/sql/prepared-statements.js';

/** A stand-in for pg's Client: records what reaches `query`; `refuseSet` plays a server without plan_cache_mode. */
class RecordingClient extends EventEmitter {
  readonly calls: unknown[][] = [];
  refuseSet = false;
  query(...args: unknown[]): unknown {
    this.calls.push(args);
    if (this.refuseSet && String(args[0]).startsWith('SET')) return Promise.reject(new Error('unrecognized configuration parameter "plan_cache_mode"'));
    return Promise.resolve({ rows: [] });
  }
}
type Query = { query(text: string, values: unknown[]): unknown };

/** A connected client: the 'connect' event sets the plan cache mode first. */
async function connected(Client: typeof pg.Client, refuseSet = false): Promise<RecordingClient> {
  const client = new Client() as unknown as RecordingClient;
  client.refuseSet = refuseSet;
  client.emit('connect');
  await new Promise((resolve) => setImmediate(resolve));
  expect(client.calls.shift()).toEqual(['SET plan_cache_mode = force_custom_plan']);
  return client;
}

describe('PostgreSQL named statements for recurring batch statements', () => {
  it('names only texts marked preparable, the same name each time, and at most 8 per connection', async () => {
    const Client = preparingClient(RecordingClient as unknown as typeof pg.Client);
    const texts = Array.from({ length: 10 }, (_, i) => `with fs_up as (select ${i}) select 1 -- ${Math.random()}`);
    texts.forEach(markPreparable);

    // Not before the connection plans each execution afresh, nor where the server refuses the setting.
    const early = new Client() as unknown as RecordingClient;
    void (early as unknown as Query).query(texts[0]!, [1]);
    expect(early.calls).toEqual([[texts[0], [1]]]);
    const old = await connected(Client, true);
    void (old as unknown as Query).query(texts[0]!, [1]);
    expect(old.calls).toEqual([[texts[0], [1]]]);

    const client = await connected(Client);

    void (client as unknown as Query).query('select $1', [1]);
    for (const text of texts) void (client as unknown as Query).query(text, [1, 'a']);
    void (client as unknown as Query).query(texts[0]!, [2, 'b']);

    const [plain, ...rest] = client.calls;
    expect(plain).toEqual(['select $1', [1]]);
    const named = rest.map((args) => (args.length === 1 && typeof args[0] === 'object' ? (args[0] as { name: string; text: string; values: unknown[] }) : undefined));
    // The first eight texts prepared; the ninth and tenth sent unnamed, as before.
    expect(named.slice(0, 8).every((q, i) => q !== undefined && q.text === texts[i] && /^freight_sync_batch_\d+$/.test(q.name))).toBe(true);
    expect(new Set(named.slice(0, 8).map((q) => q!.name)).size).toBe(8);
    expect(rest.slice(8, 10)).toEqual([
      [texts[8], [1, 'a']],
      [texts[9], [1, 'a']],
    ]);
    // A prepared text keeps its name, with the new values.
    expect(named[10]).toEqual({ name: named[0]!.name, text: texts[0], values: [2, 'b'] });

    // Another connection has its own eight.
    const other = await connected(Client);
    void (other as unknown as Query).query(texts[9]!, [3]);
    expect(other.calls[0]).toEqual([{ name: expect.stringMatching(/^freight_sync_batch_\d+$/), text: texts[9], values: [3] }]);
  });
});
