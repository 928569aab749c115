import { describe, expect, it } from 'vitest';
import { ensureServerClock, openFirstWindow, runRange, type WindowState } from '../../src/sync/window-plan.js';
import { FakeApi } from '../helpers/fake-api.js';
import { at, HOUR, plan, T0 } from '../helpers/strategy-fakes.js';

/**
 * Window planning (design §2.2, §2.3): the run's range ends at the SERVER clock minus the safety
 * lag and starts at the checkpoint minus the lookback. The fake API pins the local clock one hour
 * behind the server, so a range computed from the local clock would visibly be off by an hour.
 */
const SERVER_NOW = T0 + 10 * HOUR;

function api(clockKnown = true): FakeApi {
  return new FakeApi('main', SERVER_NOW, clockKnown, SERVER_NOW - HOUR);
}

describe('runRange (incremental)', () => {
  it('ends at the server clock minus the safety lag, not the local clock', () => {
    const range = runRange(plan({ safetyLagMs: 60_000 }), { highWater: null }, api().asClient());
    expect(range).toEqual({ from: at(T0), to: at(SERVER_NOW - 60_000) });
  });

  it('starts at initialFrom when there is no checkpoint', () => {
    expect(runRange(plan({ initialFrom: at(T0 + HOUR) }), { highWater: null }, api().asClient()).from).toBe(at(T0 + HOUR));
  });

  it('overlaps the last completed range by the lookback', () => {
    const range = runRange(plan({ lookbackMs: 5 * 60_000 }), { highWater: at(T0 + 4 * HOUR) }, api().asClient());
    expect(range.from).toBe(at(T0 + 4 * HOUR - 5 * 60_000));
  });

  it('never reaches back before initialFrom through the lookback', () => {
    const range = runRange(plan({ initialFrom: at(T0 + 4 * HOUR), lookbackMs: 2 * HOUR }), { highWater: at(T0 + 5 * HOUR) }, api().asClient());
    expect(range.from).toBe(at(T0 + 4 * HOUR));
  });

  it('is empty (from == to) when the checkpoint is already past the safe end', () => {
    // The checkpoint came from a server that was ahead, or the safety lag grew: nothing to read,
    // and the range must not run backwards.
    const high = at(SERVER_NOW + HOUR);
    const range = runRange(plan({ safetyLagMs: 60_000 }), { highWater: high }, api().asClient());
    expect(range.from).toBe(high);
    expect(range.to).toBe(high);
  });

  it('never ends before the checkpoint another replica wrote with a clock estimate ahead of ours', () => {
    // Replica A's estimate put the checkpoint 10 s past what ours allows (now − lag): the range
    // re-reads the lookback and ends AT the checkpoint, so completing it cannot move it back.
    const high = at(SERVER_NOW - 60_000 + 10_000);
    const range = runRange(plan({ safetyLagMs: 60_000, lookbackMs: 5 * 60_000 }), { highWater: high }, api().asClient());
    expect(range.from).toBe(at(SERVER_NOW - 60_000 + 10_000 - 5 * 60_000));
    expect(range.to).toBe(high);
  });
});

describe('runRange with the safety lag\'s cover (lateWriteCover: lag)', () => {
  const LAG = 30_000;
  const LOOKBACK = 10 * 60_000;
  const lagPlan = plan({ safetyLagMs: LAG, lookbackMs: LOOKBACK, lagCover: true });

  it('ends the lookback earlier than the lag alone and starts at a checkpoint reached that way: each record read once', () => {
    const high = at(SERVER_NOW - LAG - LOOKBACK - 5 * 60_000);
    expect(runRange(lagPlan, { highWater: high, lagCover: true }, api().asClient())).toEqual({ from: high, to: at(SERVER_NOW - LAG - LOOKBACK), lagCover: true });
  });

  it('reads the lookback of a checkpoint reached with the lookback\'s cover again, and records the cover only once the range reaches past it', () => {
    // The setting changed from lookback to lag five minutes after the last pass: that pass read up
    // to now − lag, too early for the lag's cover of its last ten minutes.
    const high = at(SERVER_NOW - 5 * 60_000 - LAG);
    const first = runRange(lagPlan, { highWater: high }, api().asClient());
    expect(first).toEqual({ from: at(SERVER_NOW - 5 * 60_000 - LAG - LOOKBACK), to: high });
    // Ten minutes and more later, the range ends past the old checkpoint: that lookback is covered now.
    const later = new FakeApi('main', SERVER_NOW + 5 * 60_000, true, SERVER_NOW);
    const second = runRange(lagPlan, { highWater: high }, later.asClient());
    expect(second).toEqual({ from: at(SERVER_NOW - 5 * 60_000 - LAG - LOOKBACK), to: at(SERVER_NOW + 5 * 60_000 - LAG - LOOKBACK), lagCover: true });
  });

  it('a first run reads up to the safety lag alone (nothing held back), and records no cover: the next ranges re-read its lookback', () => {
    expect(runRange(lagPlan, { highWater: null }, api().asClient())).toEqual({ from: at(T0), to: at(SERVER_NOW - LAG) });
  });

  it('back to the lookback\'s cover, the mark is ignored and not carried on', () => {
    const high = at(SERVER_NOW - HOUR);
    expect(runRange(plan({ safetyLagMs: LAG, lookbackMs: LOOKBACK }), { highWater: high, lagCover: true }, api().asClient())).toEqual({
      from: at(SERVER_NOW - HOUR - LOOKBACK),
      to: at(SERVER_NOW - LAG),
    });
  });

  it('a backfill keeps its own end (now − safety lag): its seed of the checkpoint carries no mark', () => {
    expect(runRange({ ...lagPlan, mode: 'backfill', from: at(T0) }, { highWater: null }, api().asClient()).to).toBe(at(SERVER_NOW - LAG));
  });
});

describe('runRange (backfill)', () => {
  it('covers [from, to] as asked when both are in the past', () => {
    const range = runRange(plan({ mode: 'backfill', from: at(T0 + HOUR), to: at(T0 + 2 * HOUR) }), { highWater: null }, api().asClient());
    expect(range).toEqual({ from: at(T0 + HOUR), to: at(T0 + 2 * HOUR) });
  });

  it('clips `to` to the server clock minus the safety lag', () => {
    const range = runRange(plan({ mode: 'backfill', from: at(T0), to: at(SERVER_NOW + HOUR), safetyLagMs: 1000 }), { highWater: null }, api().asClient());
    expect(range.to).toBe(at(SERVER_NOW - 1000));
  });

  it('continues from its own high water mark, without lookback', () => {
    const range = runRange(plan({ mode: 'backfill', from: at(T0), to: at(T0 + 5 * HOUR), lookbackMs: HOUR }), { highWater: at(T0 + 3 * HOUR) }, api().asClient());
    expect(range).toEqual({ from: at(T0 + 3 * HOUR), to: at(T0 + 5 * HOUR) });
  });

  it('falls back to initialFrom when no `from` is given', () => {
    const range = runRange(plan({ mode: 'backfill', initialFrom: at(T0 + 2 * HOUR) }), { highWater: null }, api().asClient());
    expect(range.from).toBe(at(T0 + 2 * HOUR));
    expect(range.to).toBe(at(SERVER_NOW));
  });

  it('is empty when the backfill already reached its end', () => {
    const range = runRange(plan({ mode: 'backfill', from: at(T0), to: at(T0 + HOUR) }), { highWater: at(T0 + 2 * HOUR) }, api().asClient());
    expect(range.from).toBe(range.to);
  });
});

describe('ensureServerClock', () => {
  it('makes one cheap authenticated call when the server clock was never seen', async () => {
    const fake = api(false).on('GET /load-document-type', () => ({ data: ['Other'] }));
    expect(fake.clock.known).toBe(false);
    await ensureServerClock(fake.asClient(), new AbortController().signal);
    expect(fake.calls.map((c) => `${c.method} ${c.route}`)).toEqual(['GET /load-document-type']);
    expect(fake.clock.known).toBe(true);
    expect(fake.clock.now().getTime()).toBe(SERVER_NOW);
  });

  it('makes no call once the clock is known', async () => {
    const fake = api(true);
    await ensureServerClock(fake.asClient(), new AbortController().signal);
    expect(fake.calls).toEqual([]);
  });
});

describe('openFirstWindow', () => {
  const empty: WindowState = { highWater: null, spanMs: null, window: null };
  const signal = new AbortController().signal;

  it('keeps a window in progress untouched (a killed run resumes it)', async () => {
    const state: WindowState = { highWater: at(T0), spanMs: HOUR, window: { from: at(T0), to: at(T0 + HOUR), rangeEnd: at(T0 + 2 * HOUR) } };
    const fake = api(false);
    expect(await openFirstWindow(state, plan(), fake.asClient(), signal)).toBe(state);
    expect(fake.calls).toEqual([]);
  });

  it('opens a first window of maxWindow when no span is remembered', async () => {
    const opened = await openFirstWindow(empty, plan({ maxWindowMs: 3 * HOUR, minWindowMs: HOUR }), api().asClient(), signal);
    expect(opened).toEqual({ highWater: null, spanMs: 3 * HOUR, window: { from: at(T0), to: at(T0 + 3 * HOUR), rangeEnd: at(SERVER_NOW) } });
  });

  it('clamps a remembered span into [minWindow, maxWindow]', async () => {
    const p = plan({ maxWindowMs: 3 * HOUR, minWindowMs: HOUR });
    expect((await openFirstWindow({ ...empty, spanMs: 60_000 }, p, api().asClient(), signal))?.spanMs).toBe(HOUR);
    expect((await openFirstWindow({ ...empty, spanMs: 50 * HOUR }, p, api().asClient(), signal))?.spanMs).toBe(3 * HOUR);
    expect((await openFirstWindow({ ...empty, spanMs: 2 * HOUR }, p, api().asClient(), signal))?.spanMs).toBe(2 * HOUR);
  });

  it('ends the first window at the range end when the range is shorter than the span', async () => {
    const opened = await openFirstWindow({ ...empty, highWater: at(SERVER_NOW - 30 * 60_000) }, plan({ maxWindowMs: 3 * HOUR }), api().asClient(), signal);
    expect(opened?.window).toEqual({ from: at(SERVER_NOW - 30 * 60_000), to: at(SERVER_NOW), rangeEnd: at(SERVER_NOW) });
  });

  it('returns undefined when there is nothing to read yet', async () => {
    expect(await openFirstWindow({ ...empty, highWater: at(SERVER_NOW) }, plan(), api().asClient(), signal)).toBeUndefined();
  });

  it('asks the server for its clock before computing the end', async () => {
    // The local clock is an hour behind here: a window end from it would stop an hour early.
    const fake = api(false).on('GET /load-document-type', () => ({ data: [] }));
    const opened = await openFirstWindow(empty, plan({ maxWindowMs: 100 * HOUR }), fake.asClient(), signal);
    expect(fake.callsTo('GET /load-document-type')).toHaveLength(1);
    expect(opened?.window?.rangeEnd).toBe(at(SERVER_NOW));
  });
});
