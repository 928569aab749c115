import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DropWriterLockLostError } from '../../connectors/file-drop/drop-lock.js';
import type { AppendLog } from '../../connectors/file-drop/file-target.js';
import { LocalTarget } from '../../connectors/file-drop/local-target.js';
import { requireService } from '../helpers/services.js';
import { probeSshd } from '../helpers/sshd.js';
import { localDropTargets, sftpDropTargets, type DropTargets } from '../helpers/drop-targets.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { batchOf, record } from '../helpers/records.js';
import { publishedThingRows, thingsDropSink } from '../helpers/things-drop.js';

/**
 * Two writers on one drop from two hosts (a shared folder, or SFTP): the second takes the first's
 * writer lock over when it has not been refreshed for 10 minutes, and publishes its staged pages as
 * a crashed writer's. A first writer that was only paused (a frozen VM, a stalled mount) must learn
 * it before it acknowledges another page or publishes, and must not overwrite the new holder's lock.
 * Every acknowledged page is then published exactly once.
 */
const thing = (id: string) => record('things', id, { id, text: `t${id}`, parts: [{ name: 'a' }] });
const signal = () => new AbortController().signal;
const MINUTE = 60_000;

/** A local target whose page log appends can be held up: `stall` runs before the bytes go in. */
class StallingTarget extends LocalTarget {
  stall: (() => Promise<void>) | undefined;

  override async openAppendLog(dir: string, name: string): Promise<AppendLog> {
    const log = await super.openAppendLog(dir, name);
    const append = log.append.bind(log);
    log.append = async (parts) => {
      const stall = this.stall;
      this.stall = undefined;
      await stall?.();
      return append(parts);
    };
    return log;
  }
}

async function setup(targets: DropTargets) {
  const out = path.join(await targets.base(), 'out');
  const writer = (host: string, target = targets.target()) => {
    const clock = { ms: Date.now() };
    const logs = capturingLogger('info');
    const sink = thingsDropSink(out, { target, logger: logs.logger, now: () => new Date(clock.ms), lock: { host } });
    return { sink, clock, logs, write: (id: string) => sink.write(batchOf('things', `page-${id}`, [thing(id)]), signal()) };
  };
  const lockFile = async () => JSON.parse(await readFile(path.join(out, '.staging', 'writer.lock'), 'utf8')) as { host: string; token: string; at: string };
  /** Every `things` row published, in batch order. */
  const published = async () => (await publishedThingRows(out)).map((row) => row.id);
  return { out, writer, lockFile, published };
}

const local = localDropTargets('drop-lock-takeover');

describe('drop writer lock taken over from a paused writer, local folder', () => {
  takeoverCases(() => local);

  it('a page whose append stalled past the takeover is not acknowledged; written again, it is published once', async () => {
    const { writer, lockFile, published } = await setup(local);
    const target = new StallingTarget();
    const a = writer('host-a', target);
    const b = writer('host-b');
    await a.write('1');
    // host-a's append of page 2 hangs for 11 minutes (a stalled mount); meanwhile host-b takes over.
    target.stall = async () => {
      a.clock.ms += 11 * MINUTE;
      b.clock.ms += 11 * MINUTE;
      await b.write('x');
    };
    await expect(a.write('2')).rejects.toBeInstanceOf(DropWriterLockLostError);
    expect((await lockFile()).host).toBe('host-b');
    await b.sink.close();
    await a.write('2');
    await a.sink.close();
    expect(await published()).toEqual(['1', 'x', '2']);
  });
});

const sshdAvailable = requireService('a real OpenSSH sshd on loopback', probeSshd());

describe.skipIf(!sshdAvailable)('drop writer lock taken over from a paused writer, over SFTP', () => {
  takeoverCases(sftpDropTargets('takeover'));
});

function takeoverCases(targets: () => DropTargets): void {
  it('a writer paused past the takeover does not acknowledge its next page, nor overwrite the new lock; every page is published once', async () => {
    const { writer, lockFile, published } = await setup(targets());
    const a = writer('host-a');
    const b = writer('host-b');
    await a.write('1');
    const aLock = await lockFile();
    expect(aLock.host).toBe('host-a');

    // host-a freezes for 11 minutes; host-b's clock runs on, finds the lock stale and takes it.
    a.clock.ms += 11 * MINUTE;
    b.clock.ms += 11 * MINUTE;
    await b.write('2');
    // host-a's page 1 was acknowledged: host-b published it as a crashed writer's batch.
    expect(await published()).toEqual(['1']);
    const bLock = await lockFile();
    expect(bLock.host).toBe('host-b');

    // host-a wakes up: its next page is refused, and host-b's lock stays.
    await expect(a.write('3')).rejects.toBeInstanceOf(DropWriterLockLostError);
    expect((await lockFile()).token).toBe(bLock.token);
    expect(a.logs.text()).toContain('drop writer lock lost');

    await b.sink.close();
    // The engine writes the refused page again; host-a takes the released lock and publishes it.
    await a.write('3');
    await a.sink.close();
    expect(await published()).toEqual(['1', '2', '3']);
  });

  it('a writer paused before publishing leaves its batch to the new holder: published once, not twice', async () => {
    const { writer, published } = await setup(targets());
    const a = writer('host-a');
    const b = writer('host-b');
    await a.write('1');
    await a.write('2');
    a.clock.ms += 11 * MINUTE;
    b.clock.ms += 11 * MINUTE;
    await b.write('3');
    await expect(a.sink.flush(signal())).rejects.toBeInstanceOf(DropWriterLockLostError);
    await b.sink.close();
    await a.sink.close();
    expect(await published()).toEqual(['1', '2', '3']);
  });

  it('a lock still its own is refreshed after a pause, not taken for lost', async () => {
    const { writer, lockFile, published } = await setup(targets());
    const a = writer('host-a');
    await a.write('1');
    const before = await lockFile();
    a.clock.ms += 11 * MINUTE;
    await a.write('2');
    const after = await lockFile();
    expect(after.token).toBe(before.token);
    expect(Date.parse(after.at)).toBe(a.clock.ms);
    await a.sink.close();
    expect(await published()).toEqual(['1', '2']);
  });
}
