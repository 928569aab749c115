import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiNetworkError, ApiRetriesExhaustedError } from '../../src/api/errors.js';
import { CommandRunner, type RunnerSettings } from '../../src/outbound/command-runner.js';
import { OutboxStore } from '../../src/state/stores/outbox-store.js';
import type { OutboxRow, StateTables } from '../../src/state/tables.js';
import { apiError, FakeApi } from '../helpers/fake-api.js';
import { createCommand, enqueue, statusCommand, updateCommand } from '../helpers/outbox-rows.js';
import { freshStateDatabase } from '../helpers/state-db.js';

/**
 * One step of a command against a scripted fake API (no HTTP) and a real SQLite outbox. The
 * contract under test (design §3): a POST is preceded by a persisted `sending`; an ambiguous
 * outcome is looked up before anything is sent again; rejections are final with the API's words;
 * 429 and other "certainly not processed" failures are retried.
 */
const SERVER_NOW = Date.parse('2024-06-01T12:00:00.000Z');
const SETTINGS: RunnerSettings = { reconcileBy: 'secondaryReferenceNo', setSecondaryReferenceNo: true, maxAttempts: 3 };

let db: Kysely<StateTables>;
let outbox: OutboxStore;
const signal = new AbortController().signal;

beforeEach(async () => {
  ({ db } = await freshStateDatabase());
  outbox = new OutboxStore(db);
});

afterEach(async () => {
  await db.destroy();
});

async function row(id: number): Promise<OutboxRow> {
  const r = await outbox.get(id);
  if (!r) throw new Error(`no row ${id}`);
  return r;
}

function load(ref: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { _id: `id-${ref}`, reference_number: ref, ...extra };
}

function runner(api: FakeApi, settings: Partial<RunnerSettings> = {}): CommandRunner {
  return new CommandRunner(api.asClient(), outbox, { ...SETTINGS, ...settings });
}

const reset = () => new ApiNetworkError({ method: 'POST', route: '/loads' }, 'ECONNRESET', 'socket hang up', true);
const refused = () => new ApiNetworkError({ method: 'POST', route: '/loads' }, 'ECONNREFUSED', 'connection refused', false);

describe('CommandRunner: create', () => {
  it('persists `sending` before the POST, carries the ERP key in secondaryReferenceNo, and returns the load', async () => {
    const id = await enqueue(outbox, createCommand('ERP-1'));
    let stateDuringPost: string | undefined;
    const api = new FakeApi('main', SERVER_NOW).on('POST /loads', async () => {
      stateDuringPost = (await row(id)).state;
      return { data: load('L-1') };
    });
    const outcome = await runner(api).step(await row(id), signal);
    expect(outcome).toEqual({ type: 'done', result: { referenceNumber: 'L-1', loadId: 'id-L-1' } });
    expect(stateDuringPost).toBe('sending');
    expect(api.callsTo('POST /loads')[0]!.body).toMatchObject({ secondaryReferenceNo: 'ERP-1', caller: 'C1' });
    // sent_at is the SERVER clock (compared with the load's createdAt when reconciling).
    expect(await row(id)).toMatchObject({ attempts: 1, sent_at: new Date(SERVER_NOW).toISOString() });
  });

  it('keeps a secondaryReferenceNo the ERP gave, and sets none when told not to', async () => {
    const id = await enqueue(outbox, createCommand('ERP-1', { secondaryReferenceNo: 'OWN' }));
    const id2 = await enqueue(outbox, createCommand('ERP-2'));
    const api = new FakeApi('main', SERVER_NOW).on('POST /loads', () => ({ data: load('L') }));
    await runner(api).step(await row(id), signal);
    await runner(api, { setSecondaryReferenceNo: false }).step(await row(id2), signal);
    expect(api.callsTo('POST /loads').map((c) => (c.body as Record<string, unknown>)['secondaryReferenceNo'])).toEqual(['OWN', undefined]);
  });

  it('an ambiguous failure (reset, 5xx) asks for a look-up, not a re-send', async () => {
    const id = await enqueue(outbox, createCommand('ERP-1'));
    const id2 = await enqueue(outbox, createCommand('ERP-2'));
    const api = new FakeApi('main', SERVER_NOW).on('POST /loads', (_c, n) => {
      throw n === 0 ? reset() : apiError(502, 'POST', '/loads', 'Bad Gateway');
    });
    expect(await runner(api).step(await row(id), signal)).toMatchObject({ type: 'reconcile', error: expect.stringContaining('socket hang up') });
    expect(await runner(api).step(await row(id2), signal)).toMatchObject({ type: 'reconcile', error: expect.stringContaining('502') });
    expect(api.callsTo('POST /loads')).toHaveLength(2);
  });

  it('a 4xx is final: dead with the API’s own message', async () => {
    const id = await enqueue(outbox, createCommand('ERP-1'));
    const api = new FakeApi('main', SERVER_NOW).on('POST /loads', () => {
      throw apiError(400, 'POST', '/loads', 'preSetOrderStatus is not an allowed value');
    });
    expect(await runner(api).step(await row(id), signal)).toEqual({ type: 'dead', error: 'the API rejected it (HTTP 400): preSetOrderStatus is not an allowed value' });
  });

  it('429 (also after the client exhausted its retries) and a refused connection are retried, not reconciled', async () => {
    const id = await enqueue(outbox, createCommand('ERP-1'));
    const too = apiError(429, 'POST', '/loads', 'Too Many Requests');
    const answers: unknown[] = [too, new ApiRetriesExhaustedError({ method: 'POST', route: '/loads' }, 5, 1000, too), refused()];
    const api = new FakeApi('main', SERVER_NOW).on('POST /loads', (_c, n) => {
      throw answers[n];
    });
    const r = runner(api);
    for (let i = 0; i < answers.length; i++) expect((await r.step(await row(id), signal)).type).toBe('retry');
    // Each send used an attempt.
    expect((await row(id)).attempts).toBe(3);
  });
});

describe('CommandRunner: reconciling an ambiguous create', () => {
  async function reconcilingCreate(erpKey = 'ERP-1', body: Record<string, unknown> = {}, attempts = 1): Promise<number> {
    const id = await enqueue(outbox, createCommand(erpKey, body));
    await outbox.markSending(id, attempts, new Date(SERVER_NOW - 60_000).toISOString());
    await outbox.markWaiting(id, 'reconciling', 'socket hang up', new Date(SERVER_NOW));
    return id;
  }

  it('finds the load by secondaryReferenceNo and is done without sending again', async () => {
    const id = await reconcilingCreate();
    const api = new FakeApi('main', SERVER_NOW)
      .on('GET /loads', () => ({ data: [load('L-9', { secondaryReferenceNo: 'ERP-1', createdAt: new Date(SERVER_NOW - 30_000).toISOString() })] }))
      .on('POST /loads', () => {
        throw new Error('must not re-send');
      });
    const outcome = await runner(api).step(await row(id), signal);
    expect(outcome).toEqual({ type: 'done', result: { referenceNumber: 'L-9', loadId: 'id-L-9', note: 'found by secondaryReferenceNo after an ambiguous create' } });
    expect(api.callsTo('GET /loads')[0]!.query).toMatchObject({ searchTerm: 'ERP-1', skip: 0, limit: 50 });
    expect(api.callsTo('POST /loads')).toHaveLength(0);
  });

  it('re-sends only when the look-up finds nothing', async () => {
    const id = await reconcilingCreate();
    const api = new FakeApi('main', SERVER_NOW).on('GET /loads', () => ({ data: [] })).on('POST /loads', () => ({ data: load('L-2') }));
    const outcome = await runner(api).step(await row(id), signal);
    expect(outcome).toMatchObject({ type: 'done', result: { referenceNumber: 'L-2' } });
    expect(api.calls.map((c) => `${c.method} ${c.route}`)).toEqual(['GET /loads', 'POST /loads']);
    expect((await row(id)).attempts).toBe(2);
  });

  it('gives up when not found after maxAttempts sends', async () => {
    const id = await reconcilingCreate('ERP-1', {}, 3);
    const api = new FakeApi('main', SERVER_NOW).on('GET /loads', () => ({ data: [] }));
    expect(await runner(api).step(await row(id), signal)).toEqual({ type: 'dead', error: 'not created after 3 attempts; last error: socket hang up' });
    expect(api.callsTo('POST /loads')).toHaveLength(0);
  });

  it('a failed look-up is looked up again later (never a blind re-send)', async () => {
    const id = await reconcilingCreate();
    const api = new FakeApi('main', SERVER_NOW).on('GET /loads', () => {
      throw apiError(503, 'GET', '/loads', 'Service Unavailable');
    });
    const outcome = await runner(api).step(await row(id), signal);
    expect(outcome).toMatchObject({ type: 'reconcile', error: expect.stringContaining('looking the load up after an ambiguous create failed') });
    expect(api.callsTo('POST /loads')).toHaveLength(0);
  });

  it('is dead, not re-sent, when the create carries nothing to look it up by', async () => {
    const id = await reconcilingCreate();
    const api = new FakeApi('main', SERVER_NOW);
    const outcome = await runner(api, { setSecondaryReferenceNo: false, reconcileBy: 'containerNo+caller' }).step(await row(id), signal);
    expect(outcome.type).toBe('dead');
    expect((outcome as { error: string }).error).toContain('carries neither secondaryReferenceNo nor containerNo');
    expect(api.calls).toEqual([]);
  });

  it('looks up by containerNo and caller when configured', async () => {
    const id = await reconcilingCreate('ERP-1', { containerNo: 'MSCU1234567' });
    const api = new FakeApi('main', SERVER_NOW).on('GET /loads', () => ({ data: [load('L-5', { containerNo: 'MSCU1234567', caller: { _id: 'C1' } })] }));
    const outcome = await runner(api, { reconcileBy: 'containerNo+caller' }).step(await row(id), signal);
    expect(outcome).toMatchObject({ type: 'done', result: { referenceNumber: 'L-5', note: 'found by containerNo+caller after an ambiguous create' } });
    expect(api.callsTo('GET /loads')[0]!.query).toMatchObject({ containerNo: 'MSCU1234567', caller: ['C1'] });
  });
});

describe('CommandRunner: update and status', () => {
  it('updates by reference number; a 4xx is dead with the precise error, a 5xx retried', async () => {
    const id = await enqueue(outbox, updateCommand('U1', { referenceNumber: 'L-1' }, { notes: 'hello' }));
    const api = new FakeApi('main', SERVER_NOW).on('PUT /loads', (_c, n) => {
      if (n === 0) return { data: load('L-1') };
      if (n === 1) throw apiError(400, 'PUT', '/loads', 'notes must be a string');
      throw apiError(500, 'PUT', '/loads', 'Internal');
    });
    const r = runner(api);
    expect(await r.step(await row(id), signal)).toEqual({ type: 'done', result: { referenceNumber: 'L-1', loadId: 'id-L-1' } });
    expect(api.callsTo('PUT /loads')[0]).toMatchObject({ query: { reference_number: 'L-1' }, body: { notes: 'hello' } });
    expect(await r.step(await row(id), signal)).toEqual({ type: 'dead', error: 'the API rejected it (HTTP 400): notes must be a string' });
    expect((await r.step(await row(id), signal)).type).toBe('retry');
  });

  it('a 429 on a PUT is retried', async () => {
    const id = await enqueue(outbox, updateCommand('U1', { referenceNumber: 'L-1' }, { notes: 'x' }));
    const api = new FakeApi('main', SERVER_NOW).on('PUT /loads', () => {
      throw apiError(429, 'PUT', '/loads', 'Too Many Requests');
    });
    expect(await runner(api).step(await row(id), signal)).toMatchObject({ type: 'retry', error: expect.stringContaining('429') });
  });

  it('a status change waits for its load’s create, then uses the reference number the create got', async () => {
    const create = await enqueue(outbox, createCommand('A'));
    const status = await enqueue(outbox, statusCommand('A-s', 'A'));
    const api = new FakeApi('main', SERVER_NOW).on('PUT /load-status/:reference_number', () => ({ data: load('L-A') }));
    const r = runner(api);
    expect(await r.step(await row(status), signal)).toEqual({ type: 'wait', error: `waiting for the create of its load (outbox #${create})` });
    expect(api.calls).toEqual([]);
    // A wait uses no attempt.
    expect((await row(status)).attempts).toBe(0);

    await outbox.markDone(create, { referenceNumber: 'L-A', loadId: 'id-L-A' });
    expect((await r.step(await row(status), signal)).type).toBe('done');
    expect(api.calls[0]).toMatchObject({ path: '/load-status/L-A', body: { status: 'AVAILABLE' } });
  });

  it('a status change of a load whose create is dead is dead too, naming the create', async () => {
    const create = await enqueue(outbox, createCommand('A'));
    await outbox.markDead(create, 'the API rejected it (HTTP 400): caller is required');
    const status = await enqueue(outbox, statusCommand('A-s', 'A'));
    const outcome = await runner(new FakeApi('main', SERVER_NOW)).step(await row(status), signal);
    expect(outcome).toEqual({ type: 'dead', error: `blocked: the create of its load (outbox #${create}, erp_key "A") is dead: the API rejected it (HTTP 400): caller is required` });
  });

  it('a status change naming an unknown create is dead', async () => {
    const status = await enqueue(outbox, statusCommand('X-s', 'X'));
    expect(await runner(new FakeApi('main', SERVER_NOW)).step(await row(status), signal)).toEqual({ type: 'dead', error: 'load_erp_key: no create with erp_key "X" in the outbox' });
  });

  it('brokerage sends the §4.4.4 parameters with the reference number', async () => {
    const id = await enqueue(outbox, { kind: 'status', erpKey: 'S', target: { referenceNumber: 'L-B' }, params: { status: 'PENDING', notes: 'n' } });
    const api = new FakeApi('brokerage', SERVER_NOW).on('PUT /load-status/', () => ({ data: load('L-B') }));
    expect((await runner(api).step(await row(id), signal)).type).toBe('done');
    expect(api.calls[0]).toMatchObject({ query: { reference_number: 'L-B' }, body: { status: 'PENDING', notes: 'n', reference_number: 'L-B' } });
  });

  it('an aborted PUT throws to the dispatcher (which leaves the row for a retry)', async () => {
    const id = await enqueue(outbox, updateCommand('U1', { referenceNumber: 'L-1' }, { notes: 'x' }));
    const abort = new AbortController();
    abort.abort();
    await expect(runner(new FakeApi('main', SERVER_NOW).on('PUT /loads', () => ({ data: load('L-1') }))).step(await row(id), abort.signal)).rejects.toThrow();
  });
});

describe('CommandRunner: documents', () => {
  it('counts documents of the type before the first upload, and recognises an ambiguous upload by file name', async () => {
    const id = await enqueue(outbox, { kind: 'document', erpKey: 'D', target: { referenceNumber: 'L-1' }, documentType: 'Other', fileName: 'pod 1.pdf', contentBase64: Buffer.from('x').toString('base64') });
    let docs: Array<{ type: string; url: string }> = [{ type: 'Other', url: 'https://files/old.pdf' }];
    const api = new FakeApi('main', SERVER_NOW)
      .on('GET /load-document/', () => ({ data: docs }))
      .on('POST /loads/document', () => {
        docs = [...docs, { type: 'Other', url: 'https://files/pod%201.pdf' }];
        throw reset();
      });
    const r = runner(api);
    expect((await r.step(await row(id), signal)).type).toBe('reconcile');
    expect((await row(id)).result_note).toBe('documents-before:1');

    await outbox.markWaiting(id, 'reconciling', 'socket hang up', new Date());
    const outcome = await r.step(await row(id), signal);
    expect(outcome).toEqual({ type: 'done', result: { referenceNumber: 'L-1', loadId: null, note: 'uploaded: https://files/pod%201.pdf (found after an ambiguous upload)' } });
    expect(api.callsTo('POST /loads/document')).toHaveLength(1);
  });
});
