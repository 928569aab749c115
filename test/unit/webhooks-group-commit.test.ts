import { describe, expect, it } from 'vitest';
import { GroupCommitter } from '../../src/webhooks/group-commit.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every pending immediate and microtask run (the committer starts a group one turn after the first submit). */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

/** A commit function whose calls are recorded and settled by the test. */
function controlledCommit() {
  const calls: Array<{ entries: string[]; done: Deferred<string[]> }> = [];
  const commit = (entries: readonly string[]) => {
    const done = deferred<string[]>();
    calls.push({ entries: [...entries], done });
    return done.promise;
  };
  return { calls, commit };
}

function track<T>(promise: Promise<T>) {
  const state: { settled: 'no' | 'resolved' | 'rejected'; value?: T; error?: unknown } = { settled: 'no' };
  promise.then(
    (value) => Object.assign(state, { settled: 'resolved', value }),
    (error: unknown) => Object.assign(state, { settled: 'rejected', error }),
  );
  return state;
}

describe('group commit of webhook deliveries', () => {
  it('commits entries submitted together in one call and settles none of them before that commit returns', async () => {
    const { calls, commit } = controlledCommit();
    const committer = new GroupCommitter<string, string>(commit);
    const submitted = ['a', 'b', 'c'].map((e) => track(committer.submit(e)));
    await turns();
    expect(calls.map((c) => c.entries)).toEqual([['a', 'b', 'c']]);
    // The commit has not returned: nobody may be answered yet.
    expect(submitted.map((s) => s.settled)).toEqual(['no', 'no', 'no']);
    calls[0]!.done.resolve(['stored', 'duplicate', 'stored']);
    await turns();
    expect(submitted.map((s) => [s.settled, s.value])).toEqual([
      ['resolved', 'stored'],
      ['resolved', 'duplicate'],
      ['resolved', 'stored'],
    ]);
  });

  it('puts what arrives during a commit into the next group, committed only after the first one', async () => {
    const { calls, commit } = controlledCommit();
    const committer = new GroupCommitter<string, string>(commit);
    const first = track(committer.submit('a'));
    await turns();
    const later = ['b', 'c'].map((e) => track(committer.submit(e)));
    await turns();
    // One commit at a time: b and c wait for a's transaction.
    expect(calls.map((c) => c.entries)).toEqual([['a']]);
    calls[0]!.done.resolve(['stored']);
    await turns();
    expect(first.settled).toBe('resolved');
    expect(calls.map((c) => c.entries)).toEqual([['a'], ['b', 'c']]);
    expect(later.map((s) => s.settled)).toEqual(['no', 'no']);
    calls[1]!.done.resolve(['stored', 'stored']);
    await turns();
    expect(later.map((s) => s.settled)).toEqual(['resolved', 'resolved']);
  });

  it('rejects every entry of a group whose commit fails, and commits the next group as usual', async () => {
    const { calls, commit } = controlledCommit();
    const committer = new GroupCommitter<string, string>(commit);
    const failed = ['a', 'b'].map((e) => track(committer.submit(e)));
    await turns();
    const next = track(committer.submit('c'));
    const unreachable = new Error('state store unreachable');
    calls[0]!.done.reject(unreachable);
    await turns();
    expect(failed.map((s) => [s.settled, s.error])).toEqual([
      ['rejected', unreachable],
      ['rejected', unreachable],
    ]);
    expect(calls[1]?.entries).toEqual(['c']);
    calls[1]!.done.resolve(['stored']);
    await turns();
    expect(next.settled).toBe('resolved');
  });

  it('splits a backlog larger than the group limit into several commits, in order', async () => {
    const { calls, commit } = controlledCommit();
    const committer = new GroupCommitter<string, string>(commit, 2);
    const all = ['a', 'b', 'c', 'd', 'e'].map((e) => track(committer.submit(e)));
    for (let i = 0; i < 3; i++) {
      await turns();
      calls[i]!.done.resolve(calls[i]!.entries.map((e) => `stored ${e}`));
    }
    await turns();
    expect(calls.map((c) => c.entries)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(all.map((s) => s.value)).toEqual(['stored a', 'stored b', 'stored c', 'stored d', 'stored e']);
  });

  it('rejects the group when the commit returns a result count that does not match', async () => {
    const committer = new GroupCommitter<string, string>(async () => ['only one']);
    const results = await Promise.allSettled([committer.submit('a'), committer.submit('b')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
