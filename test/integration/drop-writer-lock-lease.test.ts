import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DropWriterLockLostError } from '../../connectors/file-drop/drop-lock.js';
import type { WriterFence } from '../../src/contracts/index.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { localDropTargets, sftpDropTargets, type DropTargets } from '../helpers/drop-targets.js';
import { requireService } from '../helpers/services.js';
import { probeSshd } from '../helpers/sshd.js';
import { batchOf, record } from '../helpers/records.js';
import { publishedThingRows, thingsDropSink } from '../helpers/things-drop.js';

/**
 * Drop writers under an account lease (ConnectorContext.writerFence): the lock records the lease's
 * epoch, and a writer of a later epoch of the same lease takes it over at once — from a paused
 * holder, or one on another host, which used to hold the drop up for as long as it stayed paused
 * (up to 10 minutes). The earlier holder acknowledges nothing more, and every acknowledged page is
 * published exactly once. No clock is advanced here: the takeover does not wait for staleness.
 */
const thing = (id: string) => record('things', id, { id, text: `t${id}`, parts: [{ name: 'a' }] });
const signal = () => new AbortController().signal;
const SCOPE = 'postgres:db:5432/fs/freight_sync#acme';

/** A tenure of the lease as the app gives it to connectors: `held` turns false when it ends. */
class Tenure {
  current: (WriterFence & { over: boolean }) | undefined;
  begin(epoch: number, scope = SCOPE): void {
    const tenure = { scope, epoch, over: false, held: () => !tenure.over };
    this.current = tenure;
  }
  end(): void {
    if (this.current) this.current.over = true;
  }
  readonly get = (): WriterFence | undefined => this.current;
}

async function setup(targets: DropTargets) {
  const out = path.join(await targets.base(), 'out');
  const writer = (host: string) => {
    const tenure = new Tenure();
    const logs = capturingLogger('info');
    const sink = thingsDropSink(out, { target: targets.target(), logger: logs.logger, lock: { host, fence: tenure.get } });
    return { sink, tenure, logs, write: (id: string) => sink.write(batchOf('things', `page-${id}`, [thing(id)]), signal()) };
  };
  const lockFile = async () =>
    JSON.parse(await readFile(path.join(out, '.staging', 'writer.lock'), 'utf8')) as { host: string; token: string; fence?: { scope: string; epoch: number } };
  /** Every `things` row published, in batch order. */
  const published = async () => (await publishedThingRows(out)).map((row) => row.id);
  return { writer, lockFile, published };
}

/** `work` settled within a generous deadline: a writer that waits for a stale lock never would here. */
async function settlesSoon<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after 20 s (the lock was not taken over)`)), 20_000);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe('drop writer lock under an account lease, local folder', () => {
  leaseCases(() => localDropTargets('drop-lock-lease'));
});

const sshdAvailable = requireService('a real OpenSSH sshd on loopback', probeSshd());

describe.skipIf(!sshdAvailable)('drop writer lock under an account lease, over SFTP', () => {
  leaseCases(sftpDropTargets('lease'));
});

/** The cases, for each kind of drop: a writer's lock file and pages are read where the drop is (the loopback sshd's paths are local). */
function leaseCases(targets: () => DropTargets): void {
  it('a later epoch of the lease takes the lock over at once from a holder on another host; that holder acknowledges nothing more', async () => {
    const { writer, lockFile, published } = await setup(targets());
    const a = writer('host-a');
    const b = writer('host-b');
    a.tenure.begin(1);
    await a.write('1');
    expect((await lockFile()).fence).toEqual({ scope: SCOPE, epoch: 1 });

    // host-a freezes holding the lock; its lease expires and host-b claims epoch 2.
    a.tenure.end();
    b.tenure.begin(2);
    await settlesSoon(b.write('2'), 'host-b writing');
    expect(await published()).toEqual(['1']);
    expect(await lockFile()).toMatchObject({ host: 'host-b', fence: { scope: SCOPE, epoch: 2 } });
    expect(b.logs.text()).toContain('taking over the drop writer lock of an earlier holder of lease');

    // host-a wakes: its page is refused before it is acknowledged, and host-b's lock stays.
    const bToken = (await lockFile()).token;
    await expect(a.write('3')).rejects.toBeInstanceOf(DropWriterLockLostError);
    expect((await lockFile()).token).toBe(bToken);

    await b.sink.close();
    // host-a claims the lease again (epoch 3); the engine writes the refused page again.
    a.tenure.begin(3);
    await a.write('3');
    await a.sink.close();
    expect(await published()).toEqual(['1', '2', '3']);
  });

  it('a sink whose lease changed hands between two of its pages learns it before the second is acknowledged', async () => {
    // One process's sink outlives its tenures: epoch 1 lost mid-batch, epoch 2 on another
    // replica published that batch, and this process claimed again (epoch 3) — with its batch
    // still open in memory, its page log gone.
    const { writer, published } = await setup(targets());
    const a = writer('host-a');
    const c = writer('host-c');
    a.tenure.begin(1);
    await a.write('1');
    a.tenure.end();
    c.tenure.begin(2);
    await settlesSoon(c.write('c'), 'host-c writing');
    await c.sink.close();
    c.tenure.end();

    a.tenure.begin(3);
    const refused = await a.write('2').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DropWriterLockLostError);
    expect((refused as Error).message).toContain('nobody (the lock file is gone)');
    await a.write('2');
    await a.sink.close();
    expect(await published()).toEqual(['1', 'c', '2']);
  });

  it('a writer that goes on after its lease ended keeps naming that lease in the lock: a later epoch still takes it over at once', async () => {
    const { writer, lockFile, published } = await setup(targets());
    const a = writer('host-a');
    const b = writer('host-b');
    a.tenure.begin(1);
    await a.write('1');
    // A page racing the tenure's cut: the lock is read (still host-a's) and rewritten — with epoch 1, not without a lease.
    a.tenure.end();
    await a.write('2');
    expect((await lockFile()).fence).toEqual({ scope: SCOPE, epoch: 1 });
    b.tenure.begin(2);
    await settlesSoon(b.write('x'), 'host-b writing');
    expect(await published()).toEqual(['1', '2']);
    await expect(a.write('3')).rejects.toBeInstanceOf(DropWriterLockLostError);
    await b.sink.close();
    expect(await published()).toEqual(['1', '2', 'x']);
  });

  it('a lock of the same or a later epoch, or of another lease, is not taken over', async () => {
    const { writer, lockFile, published } = await setup(targets());
    const a = writer('host-a');
    a.tenure.begin(5);
    await a.write('1');
    const held = await lockFile();
    for (const [epoch, scope] of [
      [4, SCOPE],
      [5, SCOPE],
      [9, `${SCOPE}-other`],
    ] as const) {
      const b = writer('host-b');
      b.tenure.begin(epoch, scope);
      // `recover` tries the lock without waiting, as a sink does at start.
      await b.sink.recover();
      expect((await lockFile()).token).toBe(held.token);
      expect(b.logs.text()).not.toContain('taking over');
    }
    expect(await published()).toEqual([]);
    await a.write('2');
    await a.sink.close();
    expect(await published()).toEqual(['1', '2']);
  });

  it('a holder of an ended lease whose lock nobody took still publishes at close', async () => {
    const { writer, lockFile, published } = await setup(targets());
    const a = writer('host-a');
    a.tenure.begin(1);
    await a.write('1');
    expect((await lockFile()).fence?.epoch).toBe(1);
    // The daemon stopped: the tenure ended (the lease released), then the connectors close.
    a.tenure.end();
    await a.sink.close();
    expect(await published()).toEqual(['1']);
  });

  it('a lock written without a lease is refreshed with the lease once one is held', async () => {
    const { writer, lockFile, published } = await setup(targets());
    const a = writer('host-a');
    await a.write('1');
    expect((await lockFile()).fence).toBeUndefined();
    a.tenure.begin(7);
    await a.write('2');
    expect((await lockFile()).fence).toEqual({ scope: SCOPE, epoch: 7 });
    await a.sink.close();
    expect(await published()).toEqual(['1', '2']);
  });
}
