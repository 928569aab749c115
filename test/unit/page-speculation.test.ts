import { getEventListeners } from 'node:events';
import { setImmediate } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ListPeek, ListPeekHandler } from '../../src/api/list-peek.js';
import { PageSpeculation } from '../../src/sync/page-speculation.js';

type Req = { page: number };

/** A server whose answers the test releases one by one; each answer's "elements" name the next page. */
class ManualServer {
  readonly sent: { request: Req; signal: AbortSignal; peek: ListPeekHandler; answer: (last: number) => void }[] = [];

  send = (request: Req, signal: AbortSignal, peek: ListPeekHandler): Promise<string> =>
    new Promise((resolve) => {
      this.sent.push({
        request,
        signal,
        peek,
        // The answer's bytes arrive: the reader peeks, then (after the parse) the page resolves.
        answer: (last) => {
          peek({ count: 1, element: () => ({ next: last }) } satisfies ListPeek);
          resolve(`page ${request.page}`);
        },
      });
    });

  answer(page: number, next = page + 1): void {
    const entry = [...this.sent].reverse().find((s) => s.request.page === page);
    if (!entry) throw new Error(`page ${page} was not asked for`);
    entry.answer(next);
  }

  pages(): number[] {
    return this.sent.map((s) => s.request.page);
  }

  aborted(): number[] {
    return this.sent.filter((s) => s.signal.aborted).map((s) => s.request.page);
  }
}

const guessNext = (_request: Req, peek: ListPeek): Req | undefined => {
  const element = peek.element(0) as { next: number };
  return element.next > 0 ? { page: element.next } : undefined;
};

function speculation(server: ManualServer, depth = 1, guess = guessNext, mayAskAhead?: () => boolean) {
  return new PageSpeculation<Req, string>(server.send, guess, new AbortController().signal, depth, mayAskAhead);
}

describe('PageSpeculation', () => {
  it("aborting the reader's signal aborts the request it waits for and the one ahead; close leaves no listener on it", async () => {
    for (const answered of [false, true]) {
      const server = new ManualServer();
      const run = new AbortController();
      const ahead = new PageSpeculation<Req, string>(server.send, guessNext, run.signal, 1);
      expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
      void ahead.fetch({ page: 1 });
      // Unanswered, page 1 is the request the reader waits for; answered, page 2 is ahead.
      if (answered) server.answer(1);
      await setImmediate();
      run.abort(new Error('stop'));
      expect(server.aborted()).toEqual(answered ? [2] : [1]);
      ahead.close();
      expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
    }
  });

  it('asks nothing ahead while the consumer is busy, and asks again once it waits', async () => {
    const server = new ManualServer();
    const consumer = { waiting: false };
    const ahead = speculation(server, 1, guessNext, () => consumer.waiting);
    const first = ahead.fetch({ page: 1 });
    server.answer(1);
    expect(server.pages()).toEqual([1]);
    expect(await first).toBe('page 1');
    consumer.waiting = true;
    const second = ahead.fetch({ page: 2 });
    expect(server.pages()).toEqual([1, 2]);
    server.answer(2);
    expect(server.pages()).toEqual([1, 2, 3]);
    expect(await second).toBe('page 2');
    expect(ahead.stats()).toEqual({ used: 0, wasted: 0 });
  });

  it('asks for the guessed next page when the awaited answer arrives, and hands it over when the reader asks for it', async () => {
    const server = new ManualServer();
    const ahead = speculation(server);
    const first = ahead.fetch({ page: 1 });
    expect(server.pages()).toEqual([1]);
    server.answer(1);
    expect(server.pages()).toEqual([1, 2]);
    expect(await first).toBe('page 1');
    const second = ahead.fetch({ page: 2 });
    expect(server.pages()).toEqual([1, 2]);
    server.answer(2);
    expect(await second).toBe('page 2');
    expect(server.pages()).toEqual([1, 2, 3]);
    expect(ahead.stats()).toEqual({ used: 1, wasted: 0 });
  });

  it('depth 1: an answer that arrives before the reader asked for it starts nothing (never two pages ahead)', () => {
    const server = new ManualServer();
    const ahead = speculation(server, 1);
    void ahead.fetch({ page: 1 });
    server.answer(1);
    server.answer(2);
    expect(server.pages()).toEqual([1, 2]);
    void ahead.fetch({ page: 2 });
    expect(server.pages()).toEqual([1, 2]);
  });

  it('depth 2: the chain goes two pages ahead of the awaited one, no further', () => {
    const server = new ManualServer();
    const ahead = speculation(server, 2);
    void ahead.fetch({ page: 1 });
    server.answer(1);
    server.answer(2);
    expect(server.pages()).toEqual([1, 2, 3]);
    server.answer(3);
    expect(server.pages()).toEqual([1, 2, 3]);
    void ahead.fetch({ page: 2 });
    void ahead.fetch({ page: 3 });
    expect(server.pages()).toEqual([1, 2, 3]);
    expect(ahead.stats()).toEqual({ used: 2, wasted: 0 });
  });

  it('a request other than the guess aborts the guess and all guessed from it, sends the request, and counts the waste once', () => {
    const server = new ManualServer();
    const ahead = speculation(server, 2);
    void ahead.fetch({ page: 1 });
    server.answer(1);
    server.answer(2);
    expect(server.pages()).toEqual([1, 2, 3]);
    void ahead.fetch({ page: 7 });
    expect(server.pages()).toEqual([1, 2, 3, 7]);
    expect(server.aborted()).toEqual([2, 3]);
    expect(ahead.takeWasted()).toBe(2);
    expect(ahead.takeWasted()).toBe(0);
    expect(ahead.stats()).toEqual({ used: 0, wasted: 2 });
  });

  it('close aborts what is ahead; a guess that throws or names nothing starts nothing', () => {
    const server = new ManualServer();
    const ahead = speculation(server);
    void ahead.fetch({ page: 1 });
    server.answer(1);
    ahead.close();
    expect(server.aborted()).toEqual([2]);

    const quiet = new ManualServer();
    const throwing = speculation(quiet, 1, () => {
      throw new Error('not a record');
    });
    void throwing.fetch({ page: 1 });
    quiet.answer(1);
    void speculation(quiet).fetch({ page: 5 });
    quiet.answer(5, 0);
    expect(quiet.pages()).toEqual([1, 5]);
  });

  it('asks for nothing ahead once the reader’s signal is aborted', () => {
    const server = new ManualServer();
    const controller = new AbortController();
    const ahead = new PageSpeculation<Req, string>(server.send, guessNext, controller.signal, 1);
    void ahead.fetch({ page: 1 });
    controller.abort();
    server.answer(1);
    expect(server.pages()).toEqual([1]);
  });

  it('an answer sent ahead waits for the reader to claim it before it asks whether the page is wanted (whenWanted)', async () => {
    const server = new ManualServer();
    const asked: number[] = [];
    const wantedWhen = async (): Promise<void> => {
      asked.push(server.sent.length);
    };
    const reader = new PageSpeculation<Req, string>(server.send, guessNext, new AbortController().signal, 1, () => true, wantedWhen);
    const first = reader.fetch({ page: 1 });
    // The reader's own request is claimed: it asks at once.
    await server.sent[0]!.peek.whenWanted!(server.sent[0]!.signal);
    expect(asked).toEqual([1]);
    server.answer(1);
    expect(await first).toBe('page 1');
    const ahead = server.sent[1]!;
    expect(ahead.request).toEqual({ page: 2 });
    let wanted = false;
    const waiting = ahead.peek.whenWanted!(ahead.signal).then(() => (wanted = true));
    await setImmediate();
    expect(wanted).toBe(false);
    expect(asked).toEqual([1]);
    const second = reader.fetch({ page: 2 });
    await waiting;
    expect(asked).toEqual([1, 2]);
    server.answer(2, 0);
    expect(await second).toBe('page 2');
  });

  it('a guess discarded while it waits for its claim rejects its wait (its request is aborted)', async () => {
    const server = new ManualServer();
    const reader = new PageSpeculation<Req, string>(server.send, guessNext, new AbortController().signal, 1, () => true, async () => undefined);
    const first = reader.fetch({ page: 1 });
    server.answer(1);
    await first;
    const ahead = server.sent[1]!;
    const waiting = ahead.peek.whenWanted!(ahead.signal);
    // The reader asks for another page: the guess is aborted.
    void reader.fetch({ page: 7 });
    await expect(waiting).rejects.toBeDefined();
    expect(ahead.signal.aborted).toBe(true);
    reader.close();
  });
});
