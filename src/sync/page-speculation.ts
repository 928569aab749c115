import type { ListPeek, ListPeekHandler } from '../api/list-peek.js';
import { untilNotified } from '../util/abort.js';

/** One request of a paged reader, compared field by field. */
export type PageRequest = Readonly<Record<string, string | number>>;

/**
 * What the reader would ask next if this page's answer is what its elements show (unvalidated),
 * or undefined when it cannot tell cheaply or would stop.
 */
export type NextRequestGuess<R extends PageRequest> = (request: R, peek: ListPeek) => R | undefined;

interface Ahead<R, P> {
  request: R;
  answer: Promise<P>;
  controller: AbortController;
  /** The reader asked for this request itself: only then may its answer start the next guess. */
  claimed: boolean;
  /** Lets an answer that waits for its claim (see `start`) go on. */
  onClaim?: () => void;
}

/**
 * Sends a paged reader's next request while the current answer is still being parsed and
 * validated: when a page's bytes are in, `guess` reads its last elements and the request it names
 * goes out at once. The reader then asks for its real next request, computed from the validated
 * page as always; only an identical request takes the answer sent ahead (the same request, sent a
 * few milliseconds earlier: an answer the reader could have had), any other is sent anew and the
 * guess is aborted. So what the reader reads is decided exactly as before; only the wait between
 * two pages shrinks (on loopback, by the parse and validation of a page: ~2 ms of ~6).
 *
 * At most one request is ahead, and only an answer the reader has claimed starts the next guess.
 * Nothing is asked ahead while `mayAskAhead` says no: the reader's consumer is busy (a slow sink),
 * would not take the page any earlier, and the page would only be a third one in memory beside
 * the one being delivered and the one read ahead (a 10^6-load backfill into CSV peaked 12 MiB
 * higher with it). A wrong guess costs one request.
 */
export class PageSpeculation<R extends PageRequest, P> {
  /** Requests sent ahead, in the order the reader is expected to ask for them. */
  private ahead: Ahead<R, P>[] = [];
  /** Requests sent ahead and not used (wrong guesses), since the last `takeWasted`. */
  private wasted = 0;
  private usedTotal = 0;
  private wastedTotal = 0;

  constructor(
    private readonly send: (request: R, signal: AbortSignal, peek: ListPeekHandler) => Promise<P>,
    private readonly guess: NextRequestGuess<R>,
    private readonly signal: AbortSignal,
    /** Most requests ahead of the one the reader waits for. */
    private readonly depth = 1,
    /** Asked when an answer's elements are in: may a request be sent ahead now? */
    private readonly mayAskAhead: () => boolean = () => true,
    /** Awaited before an answer is peeked at and parsed (ListPeekHandler.whenWanted). */
    private readonly whenWanted?: (signal?: AbortSignal) => Promise<void>,
  ) {
    // One listener for the whole read, not AbortSignal.any per request: on Node 20 every signal
    // AbortSignal.any makes stays registered on a long-lived source signal (nodejs/node#55351;
    // measured here: ~250 bytes a call, never freed), and the run's signal lives for the read.
    this.signal.addEventListener('abort', this.abortInFlight, { once: true });
  }

  /** Requests not yet answered, each with its own controller, aborted with the reader's signal. */
  private readonly inFlight = new Set<AbortController>();
  private readonly abortInFlight = (): void => {
    for (const controller of this.inFlight) controller.abort(this.signal.reason);
  };

  /** The answer to `request`: the one sent ahead when it is this request, else sent now. */
  fetch(request: R): Promise<P> {
    const head = this.ahead.shift();
    if (head && sameRequest(head.request, request)) {
      head.claimed = true;
      head.onClaim?.();
      this.usedTotal += 1;
      return head.answer;
    }
    // A wrong guess: what was guessed from it is wrong too.
    if (head) this.discard([head, ...this.ahead.splice(0)]);
    return this.start(request, true).answer;
  }

  /** Requests sent ahead in vain since the last call: API requests the reader's pages did not count. */
  takeWasted(): number {
    const wasted = this.wasted;
    this.wasted = 0;
    return wasted;
  }

  stats(): { used: number; wasted: number } {
    return { used: this.usedTotal, wasted: this.wastedTotal };
  }

  /** Aborts the requests still ahead (the reader stopped). */
  close(): void {
    this.discard(this.ahead.splice(0));
    this.signal.removeEventListener('abort', this.abortInFlight);
  }

  private start(request: R, claimed: boolean): Ahead<R, P> {
    const controller = new AbortController();
    const entry: Ahead<R, P> = { request, controller, claimed, answer: undefined as unknown as Promise<P> };
    const onPeek: ListPeekHandler = (peek) => {
      // Only from the last request of the chain (the one the reader waits for when none is
      // ahead), within the depth.
      const last = this.ahead.length === 0 ? entry.claimed : this.ahead[this.ahead.length - 1] === entry;
      if (!last || this.ahead.length >= this.depth || this.signal.aborted || controller.signal.aborted) return false;
      if (!this.mayAskAhead()) return false;
      let next: R | undefined;
      try {
        next = this.guess(request, peek);
      } catch {
        next = undefined;
      }
      if (!next) return false;
      this.ahead.push(this.start(next, false));
      return true;
    };
    const whenWanted = this.whenWanted;
    // An answer the reader has not asked for yet (a guess) waits for its claim first: the consumer
    // may be waiting for the page before it, not for this one.
    if (whenWanted) onPeek.whenWanted = async (signal) => {
      if (!entry.claimed) await untilClaimed(entry, signal);
      await whenWanted(signal);
    };
    if (this.signal.aborted) controller.abort(this.signal.reason);
    this.inFlight.add(controller);
    entry.answer = this.send(request, controller.signal, onPeek);
    const settled = (): void => {
      this.inFlight.delete(controller);
    };
    // Also keeps an answer ahead that is never claimed (a wrong guess, the reader stopped) from
    // being reported as unhandled.
    entry.answer.then(settled, settled);
    return entry;
  }

  private discard(entries: Ahead<R, P>[]): void {
    for (const entry of entries) {
      entry.controller.abort();
      this.wasted += 1;
      this.wastedTotal += 1;
    }
  }
}

/** Resolves when the reader claims `entry`; rejects when `signal` aborts first (a wrong guess discarded). */
function untilClaimed(entry: Ahead<unknown, unknown>, signal: AbortSignal | undefined): Promise<void> {
  return untilNotified((claimed) => {
    entry.onClaim = claimed;
    return () => {
      entry.onClaim = undefined;
    };
  }, signal);
}

function sameRequest(a: PageRequest, b: PageRequest): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => a[key] === b[key]);
}
