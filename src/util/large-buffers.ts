/**
 * The memory of the large buffers made per page (a response body ~290 KB, a page's CSV ~390 KB),
 * taken from and given back to a small free list instead of malloc and free for each page.
 *
 * Why (issue 14, memory): Node takes a buffer's memory from the C library's malloc. glibc serves
 * a block of 128 KiB or more with mmap at first, but after the first such block is freed it raises
 * that threshold to the block's size, and from then on every page's buffers come from the heap
 * arenas, where they are freed into holes between longer-lived allocations and the arenas grow
 * with the run: a backfill's peak RSS rose by ~14 MiB from 10^4 to 2×10^5 loads
 * (`MALLOC_MMAP_THRESHOLD_=131072` in the environment took those 14 MiB off; bench/results-scaling.md).
 * A process cannot set that for itself once started. Reusing the same few blocks page after page
 * leaves malloc nothing to fragment.
 */

/** Below this size a buffer is left to the collector and to Node's own pool: pooling would save little. */
const WORTH_POOLING = 64 * 1024;
/** A block above this is not kept: a rare large answer (a document, a huge page) is let go. */
const KEEP_AT_MOST_BYTES = 4 << 20;
/** Blocks kept free at most: a page's body, its tables' CSV, the read-ahead page's body, one spare. */
const KEEP_AT_MOST_BLOCKS = 6;
/** A new block is this much larger than asked (rounded to 64 KiB), so the next page, a little longer, fits it. */
const GROWTH_ROOM = 1.25;

/** Free blocks, kept until a take or a release for which there is no room. */
const free: ArrayBuffer[] = [];
/** Blocks takeBuffer handed out (their buffer views part of them), by identity. */
const lent = new WeakSet<ArrayBuffer>();

/**
 * A buffer of `size` bytes, uninitialised (as `Buffer.allocUnsafe`): a large one is a view of a
 * reused block. Give it back with `releaseBuffer` once nothing reads it; one never given back is
 * freed by the collector as any buffer.
 */
export function takeBuffer(size: number): Buffer {
  if (size < WORTH_POOLING) return Buffer.allocUnsafe(size);
  let best = -1;
  for (let i = 0; i < free.length; i++) {
    const length = free[i]!.byteLength;
    if (length >= size && (best < 0 || length < free[best]!.byteLength)) best = i;
  }
  const block = best >= 0 ? free.splice(best, 1)[0]! : newBlock(size);
  lent.add(block);
  return Buffer.from(block, 0, size);
}

function newBlock(size: number): ArrayBuffer {
  const capacity = Math.ceil((size * GROWTH_ROOM) / WORTH_POOLING) * WORTH_POOLING;
  return Buffer.allocUnsafeSlow(capacity).buffer as ArrayBuffer;
}

/**
 * Ends a large buffer's life: its memory goes back to the free list (or, with no room there, is
 * freed at the next scavenge instead of at some later full collection — a buffer that lived
 * across an await is often promoted, and V8 counts it by its few-byte handle, so 10–20 MiB of
 * them piled up between full collections). The buffer itself, and every view of its memory, is
 * left empty (detached): a reader that should not be there reads nothing rather than the next
 * page's bytes. Only for a buffer that nothing reads any more and that is a view from the start
 * of memory it alone uses (never a slice of Node's shared pool: those are small); one that cannot
 * be detached is left as is.
 */
export function releaseBuffer(buffer: Buffer): void {
  const backing = buffer.buffer;
  if (buffer.byteLength < WORTH_POOLING || buffer.byteOffset !== 0 || !(backing instanceof ArrayBuffer)) return;
  // A view of part of its memory is the whole buffer only for a block takeBuffer lent (the rest is unused).
  if (backing.byteLength !== buffer.byteLength && !lent.has(backing)) return;
  let moved: ArrayBuffer;
  try {
    // The memory moves to a new ArrayBuffer; the old one and its views are detached.
    moved = structuredClone(backing, { transfer: [backing] });
  } catch {
    return; // Not detachable (memory Node or an addon owns): the collector frees it as before.
  }
  if (moved.byteLength > KEEP_AT_MOST_BYTES) return;
  if (free.length >= KEEP_AT_MOST_BLOCKS) {
    // Keep the larger blocks: a smaller one fits fewer pages.
    let smallest = 0;
    for (let i = 1; i < free.length; i++) if (free[i]!.byteLength < free[smallest]!.byteLength) smallest = i;
    if (free[smallest]!.byteLength >= moved.byteLength) return;
    free.splice(smallest, 1);
  }
  free.push(moved);
}
