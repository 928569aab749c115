import { describe, expect, it } from 'vitest';
import { peakRssKib } from '../../src/cli/peak-rss.js';

/** The benchmarks' peak-memory figure (bin.ts `peak-rss-kib` line) follows this process's own memory. */
describe('peakRssKib', () => {
  it('is at least the resident set now, and rises when this process touches more memory', () => {
    const before = peakRssKib();
    expect(before).toBeGreaterThanOrEqual(Math.floor(process.memoryUsage().rss / 1024) - 1024);
    // Enough written memory to pass the earlier peak (this worker may have run other files) by 64 MiB.
    const headroomKib = Math.max(0, before - Math.floor(process.memoryUsage().rss / 1024));
    const block = Buffer.alloc((headroomKib << 10) + (64 << 20), 1);
    const after = peakRssKib();
    expect(block[block.length - 1]).toBe(1);
    expect(after - before).toBeGreaterThanOrEqual(48 << 10);
  });
});
