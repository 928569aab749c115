import type { Page, RejectedItem } from '../../api/paging.js';
import { throwIfAborted } from '../../util/abort.js';
import type { RawRecord } from '../stream-definition.js';
import type { SnapshotRead } from './snapshot.js';

/**
 * Reads a whole offset-paged list without a `count` (the pages end at the first short one) so
 * that the read proves itself: each page after the first starts AT the previous page's last
 * element (one element of overlap) and must begin with that same element.
 *
 * Why that proves no element was skipped: an element present throughout the read is missed only
 * if it slides from the unread part onto offsets already read between two page reads, which takes
 * an element before the boundary removed (or one moved from after it to before it). Either shifts
 * the boundary element itself to a lower offset, so the next page would not begin with it. When
 * every boundary matched (`consistent: true`), an element missing from the read was absent at
 * some moment of it, and the snapshot diff may tombstone it without a second read of the whole
 * list (which cost as much again in every pass that removed an entry: issue 14). A boundary that
 * did not match, or an element whose key cannot be told (a rejected element without one), leaves
 * `consistent: false` and the diff confirms removals by reading again (snapshot.ts).
 *
 * Cost: pages advance by `limit - 1` elements, so a list of n elements takes
 * floor((n - 1) / (limit - 1)) + 1 requests, against floor(n / limit) + 1 without overlap —
 * the same for the lists the API has (customer rates: ~120), one more only when n lies just
 * under a multiple of the page size times pages.
 */
export async function readOverlappedList(
  fetchPage: (skip: number, limit: number) => Promise<Page<RawRecord>>,
  key: (record: RawRecord) => string,
  limit: number,
  signal: AbortSignal,
): Promise<SnapshotRead> {
  const items: RawRecord[] = [];
  const rejected: RejectedItem[] = [];
  // A page of one element cannot overlap and still move on: plain paging, unproven.
  const overlap = limit >= 2 ? 1 : 0;
  let consistent = overlap === 1;
  let skip = 0;
  let pages = 0;
  let boundary: string | undefined;
  for (;;) {
    throwIfAborted(signal);
    const page = await fetchPage(skip, limit);
    pages += 1;
    const received = page.items.length + page.rejected.length;
    // Position 0 of every page after the first must be the previous page's last element: then it
    // is dropped as already read; otherwise the list shifted (and the element is kept).
    const overlapped = pages > 1 && overlap === 1 && received > 0;
    const skipFirst = overlapped && boundary !== undefined && keyAt(page, 0, key) === boundary;
    if (overlapped && !skipFirst) consistent = false;
    const firstRejected = page.rejected.some((r) => r.index === 0);
    items.push(...(skipFirst && !firstRejected ? page.items.slice(1) : page.items));
    rejected.push(...page.rejected.filter((r) => !(skipFirst && r.index === 0)));
    if (received < limit) break;
    boundary = keyAt(page, received - 1, key);
    skip += received - overlap;
  }
  return { items, rejected, pages, consistent: pages === 1 || consistent };
}

/** Key of the element at `position` of a page (a valid item or a rejected one); undefined when it has none. */
function keyAt(page: Page<RawRecord>, position: number, key: (record: RawRecord) => string): string | undefined {
  const rejected = page.rejected.find((r) => r.index === position);
  const rejectedBefore = page.rejected.filter((r) => r.index < position).length;
  const element = rejected ? rejected.raw : page.items[position - rejectedBefore];
  if (!element || typeof element !== 'object') return undefined;
  try {
    return key(element as RawRecord);
  } catch {
    return undefined;
  }
}
