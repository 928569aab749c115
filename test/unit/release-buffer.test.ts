import { describe, expect, it } from 'vitest';
import { releaseBuffer } from '../../src/util/release-buffer.js';

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
