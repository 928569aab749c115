import { describe, expect, it } from 'vitest';
import { withLockRetry } from '../../connectors/sql/lock-retry.js';

const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
const signal = () => new AbortController().signal;

describe('withLockRetry', () => {
  it('SQLite busy: tried again until it passes', async () => {
    let calls = 0;
    const result = await withLockRetry('sqlite', async () => {
      if (++calls < 6) throw busy();
      return 'written';
    }, signal());
    expect(result).toBe('written');
    expect(calls).toBe(6);
  });

  it('SQLite busy past the wait: the last error, as it is', async () => {
    let calls = 0;
    const error = await withLockRetry('sqlite', async () => {
      calls += 1;
      throw busy();
    }, signal(), { sqliteWaitMs: 100 }).catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe('SQLITE_BUSY');
    expect(calls).toBeGreaterThan(1);
  });

  it('a deadlock: `attempts` tries in all; anything else: at once', async () => {
    let calls = 0;
    await expect(withLockRetry('postgres', async () => {
      calls += 1;
      throw deadlock();
    }, signal(), { attempts: 3, pauseMs: () => 1 })).rejects.toMatchObject({ code: '40P01' });
    expect(calls).toBe(3);
    calls = 0;
    await expect(withLockRetry('sqlite', async () => {
      calls += 1;
      throw Object.assign(new Error('NOT NULL constraint failed: t.x'), { code: 'SQLITE_CONSTRAINT_NOTNULL' });
    }, signal())).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_NOTNULL' });
    expect(calls).toBe(1);
  });

  it('classifies the cause a wrapper carries, and stops when aborted', async () => {
    let calls = 0;
    const wrapped = () => Object.assign(new Error('table write failed'), { inner: busy() });
    const result = await withLockRetry('sqlite', async () => {
      if (++calls < 3) throw wrapped();
      return 'ok';
    }, signal(), { causeOf: (e) => (e as { inner: unknown }).inner });
    expect(result).toBe('ok');
    const aborted = new AbortController();
    aborted.abort();
    calls = 0;
    await expect(withLockRetry('sqlite', async () => {
      calls += 1;
      throw busy();
    }, aborted.signal)).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    expect(calls).toBe(1);
  });
});
