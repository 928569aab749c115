import { describe, expect, it } from 'vitest';
import { DEFAULT_HEAP_GROWING_PERCENT, limitHeapGrowth } from '../../src/cli/heap-growth.js';

describe('limitHeapGrowth', () => {
  it('sets the default growth, the one of FREIGHT_SYNC_HEAP_GROWING_PERCENT, or none with 0', () => {
    expect(limitHeapGrowth({}, [])).toBe(DEFAULT_HEAP_GROWING_PERCENT);
    expect(limitHeapGrowth({ FREIGHT_SYNC_HEAP_GROWING_PERCENT: '30' }, [])).toBe(30);
    expect(limitHeapGrowth({ FREIGHT_SYNC_HEAP_GROWING_PERCENT: '0' }, [])).toBeUndefined();
    expect(limitHeapGrowth({ FREIGHT_SYNC_HEAP_GROWING_PERCENT: 'lots' }, [])).toBeUndefined();
  });

  it('leaves a --heap-growing-percent given to node alone', () => {
    expect(limitHeapGrowth({}, ['--heap-growing-percent=20'])).toBeUndefined();
    expect(limitHeapGrowth({}, ['--max-old-space-size=512', '--heap_growing_percent=20'])).toBeUndefined();
  });
});
