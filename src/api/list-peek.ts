import { parseScannedElement, scannedElementCount, type ListScan } from './json-body.js';

/**
 * The elements of a list answer as soon as its bytes are in, before they are parsed and validated:
 * a reader whose next request depends only on this page's last elements (keyset paging) can send
 * it while this page is still being parsed and checked. What it is shown is not validated; it may
 * only guess from it, and must check its guess against the validated page (sync/page-speculation.ts).
 */
export interface ListPeek {
  /** Elements in the answer's `data` array. */
  readonly count: number;
  /**
   * JSON.parse of element `index` alone, or undefined when it does not parse. Read it, never
   * change it: the page's parse takes the same value instead of parsing the element again.
   */
  element(index: number): unknown;
}

/**
 * Called with the peek of a 2xx list answer (only of one large enough to be parsed in pieces).
 * Returns whether it started a request: only then does the call let the event loop turn before
 * the parse, so that request goes out first.
 */
export interface ListPeekHandler {
  (peek: ListPeek): boolean;
  /**
   * Awaited when a 2xx answer's bytes are in, before they are peeked at or parsed: resolves when
   * the reader wants the page. A reader ahead of a busy consumer keeps the answer as bytes (off the
   * JS heap) until then, not as records that would outlive young-generation collections
   * (sync/read-ahead.ts, ConsumerDemand). Rejects when the call's signal aborts.
   */
  whenWanted?: (signal?: AbortSignal) => Promise<void>;
}

export function listPeekOf(scan: ListScan): ListPeek {
  return { count: scannedElementCount(scan), element: (index) => parseScannedElement(scan, index) };
}
