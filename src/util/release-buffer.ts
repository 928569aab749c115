/** Below this size a buffer is left to the collector: releasing it would save little. */
const WORTH_RELEASING = 64 * 1024;

/**
 * Frees a large buffer's memory now instead of at some later full collection. Issue 14 (memory):
 * a buffer that lives across an await (a page's CSV while it is fsync'd, a response while the
 * next page is parsed) is often promoted to the old generation, where its memory — outside the
 * V8 heap, 100–400 KB a page — is returned only when that generation is collected; V8 counts a
 * buffer by its few-byte handle, so 10–20 MiB of them piled up between collections. Transferring
 * the memory to a clone that dies at once hands it to the young generation, freed at the next
 * scavenge. Only for a buffer that owns all of its memory (never a slice of Node's shared pool)
 * and that nothing reads any more: it is left empty. One that cannot be transferred is left as is.
 */
export function releaseBuffer(buffer: Buffer): void {
  const backing = buffer.buffer;
  if (buffer.byteLength < WORTH_RELEASING || buffer.byteOffset !== 0 || !(backing instanceof ArrayBuffer) || backing.byteLength !== buffer.byteLength) return;
  try {
    structuredClone(backing, { transfer: [backing] });
  } catch {
    // Not detachable (memory Node or an addon owns): the collector frees it as before.
  }
}
