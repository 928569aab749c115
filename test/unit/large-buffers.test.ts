import { describe, expect, it } from 'vitest';
import { releaseBuffer, takeBuffer } from '../../src/util/large-buffers.js';

describe('releaseBuffer', () => {
  it('empties a large buffer that owns all of its memory', () => {
    const big = Buffer.allocUnsafe(300 * 1024);
    releaseBuffer(big);
    expect(big.byteLength).toBe(0);
  });

  it('leaves small buffers (slices of the shared pool), slices and views of larger memory alone', () => {
    const small = Buffer.from('small');
    const neighbour = Buffer.from('neighbour');
    releaseBuffer(small);
    expect([small.toString(), neighbour.toString()]).toEqual(['small', 'neighbour']);

    const whole = Buffer.alloc(300 * 1024, 1);
    const tail = whole.subarray(100);
    const head = whole.subarray(0, 200 * 1024);
    releaseBuffer(tail);
    releaseBuffer(head);
    expect([whole.byteLength, tail.byteLength, head.byteLength]).toEqual([300 * 1024, 300 * 1024 - 100, 200 * 1024]);
  });
});

describe('takeBuffer', () => {
  it('gives a small buffer of the size asked, never pooled', () => {
    const small = takeBuffer(1000);
    expect(small.byteLength).toBe(1000);
    releaseBuffer(small);
    expect(small.byteLength).toBe(1000);
  });

  it('lends the memory of a released buffer again, and the released buffer reads nothing', () => {
    const first = takeBuffer(290_000);
    expect(first.byteLength).toBe(290_000);
    first.fill(0x5a);
    releaseBuffer(first);
    expect(first.byteLength).toBe(0);
    // A little longer (the next page): the block was made with room for it.
    const second = takeBuffer(300_000);
    expect(second.byteLength).toBe(300_000);
    // Uninitialised memory, as Buffer.allocUnsafe: the first buffer's bytes show it is the same block.
    expect(second.subarray(0, 290_000).every((byte) => byte === 0x5a)).toBe(true);
    releaseBuffer(second);
    expect(second.byteLength).toBe(0);
  });

  it('lends a block to one buffer at a time', () => {
    const a = takeBuffer(200_000);
    a.fill(1);
    releaseBuffer(a);
    const b = takeBuffer(200_000);
    const c = takeBuffer(200_000);
    b.fill(2);
    c.fill(3);
    expect([b[0], b[199_999], c[0], c[199_999]]).toEqual([2, 2, 3, 3]);
    releaseBuffer(b);
    releaseBuffer(c);
  });

  it('takes in the memory of any large buffer released whole', () => {
    const foreign = Buffer.allocUnsafe(500_000).fill(0x33);
    releaseBuffer(foreign);
    expect(foreign.byteLength).toBe(0);
    const reused = takeBuffer(450_000);
    expect(reused.every((byte) => byte === 0x33)).toBe(true);
    releaseBuffer(reused);
  });
});
