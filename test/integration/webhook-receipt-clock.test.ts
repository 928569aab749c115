import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerClock } from '../../src/api/server-clock.js';
import { openStateDatabase } from '../../src/state/database.js';
import { migrateToLatest } from '../../src/state/migrate.js';
import { CheckpointStore } from '../../src/state/stores/checkpoint-store.js';
import { noteServerClock, ReceiptClock, SERVER_CLOCK_KEY } from '../../src/webhooks/receipt-clock.js';

/**
 * Two replicas on one state file: the lease holder has measured the API's clock (150 s behind the
 * hosts, as the brokerage simulators of cluster chaos run), the standby has never called the API.
 * The standby's receipts must be stamped in the server's clock all the same.
 */
describe('webhook receipt clock on a replica that has not called the API', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  async function state() {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'receipt-clock-'));
    dirs.push(dir);
    const db = openStateDatabase(path.join(dir, 'state.sqlite'));
    await migrateToLatest(db);
    return { db, checkpoints: new CheckpointStore(db) };
  }

  const SKEW_MS = -150_000;
  /** A clock that has seen one `Date` header of a server `skewMs` off the host clock `local`. */
  const measured = (local: { ms: number }, skewMs: number) => {
    const clock = new ServerClock(() => local.ms);
    clock.observe(new Date(local.ms + skewMs).toUTCString(), local.ms);
    return clock;
  };

  it("stamps with the holder's noted offset, re-read as it moves, and with its own clock only when nothing was noted", async () => {
    const { db, checkpoints } = await state();
    try {
      const local = { ms: Date.parse('2026-11-28T12:00:00.000Z') };
      const standby = new ReceiptClock(new ServerClock(() => local.ms), checkpoints, () => local.ms);
      // Nothing noted yet: the host's clock is all there is.
      expect((await standby.now()).getTime()).toBe(local.ms);

      const holder = measured(local, SKEW_MS);
      expect(await noteServerClock(holder, checkpoints, undefined)).toBe(SKEW_MS);
      // While nothing was noted, the note is looked for again 2 s later (not 30 s): found.
      local.ms += 1_000;
      expect((await standby.now()).getTime()).toBe(local.ms);
      local.ms += 1_000;
      expect((await standby.now()).getTime()).toBe(local.ms + SKEW_MS);

      // The holder's measure moves by 2 s: noted again, and read again by the standby.
      const moved = measured(local, SKEW_MS + 2_000);
      expect(await noteServerClock(moved, checkpoints, SKEW_MS)).toBe(SKEW_MS + 2_000);
      local.ms += 10_000;
      // Not re-read within 30 s of the last read (a delivery reads no state then).
      expect((await standby.now()).getTime()).toBe(local.ms + SKEW_MS);
      local.ms += 20_000;
      expect((await standby.now()).getTime()).toBe(local.ms + SKEW_MS + 2_000);
    } finally {
      await db.destroy();
    }
  });

  it('a replica with a measure of its own uses it; the holder notes only a move of 500 ms or more', async () => {
    const { db, checkpoints } = await state();
    try {
      const local = { ms: Date.parse('2026-11-28T12:00:00.000Z') };
      await noteServerClock(measured(local, SKEW_MS), checkpoints, undefined);
      const own = measured(local, 5_000);
      expect((await new ReceiptClock(own, checkpoints, () => local.ms).now()).getTime()).toBe(local.ms + 5_000);

      const noted = async () => (await checkpoints.list()).find((e) => e.stream === SERVER_CLOCK_KEY)!.cursor as { offsetMs: number };
      // 400 ms off the note: left as it is (also when this process noted nothing yet).
      expect(await noteServerClock(measured(local, SKEW_MS + 400), checkpoints, undefined)).toBe(SKEW_MS);
      expect((await noted()).offsetMs).toBe(SKEW_MS);
      // Without a measure, nothing is noted.
      expect(await noteServerClock(new ServerClock(() => local.ms), checkpoints, SKEW_MS)).toBe(SKEW_MS);
      expect((await noted()).offsetMs).toBe(SKEW_MS);
    } finally {
      await db.destroy();
    }
  });
});
