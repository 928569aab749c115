import { describe, expect, it } from 'vitest';
import { STREAM_NAMES } from '../../src/config/stream-names.js';
import { STREAMS, streamByName } from '../../src/sync/streams/index.js';

describe('stream names', () => {
  it('the definitions follow the one list, in its order, each under its own name', () => {
    expect(STREAMS.map((s) => s.name)).toEqual([...STREAM_NAMES]);
    for (const name of STREAM_NAMES) expect(streamByName(name).name).toBe(name);
  });

  it('runs loads before invoices (loads feed invoice gap-fill)', () => {
    expect(STREAM_NAMES.indexOf('loads')).toBeLessThan(STREAM_NAMES.indexOf('invoices'));
  });

  it('rejects a name that is not a stream', () => {
    expect(() => streamByName('toString' as never)).toThrow('unknown stream toString');
  });
});
