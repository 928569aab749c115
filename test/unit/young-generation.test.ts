import { describe, expect, it } from 'vitest';
import { DEFAULT_SEMI_SPACE_MIB, semiSpaceCapMiB, youngGenerationGovernor } from '../../src/cli/young-generation.js';

const MIB = 1024 * 1024;

describe('semiSpaceCapMiB', () => {
  it('is the default, the one of FREIGHT_SYNC_SEMI_SPACE_MIB, or none with 0 or a bad value', () => {
    expect(semiSpaceCapMiB({}, [])).toBe(DEFAULT_SEMI_SPACE_MIB);
    expect(semiSpaceCapMiB({ FREIGHT_SYNC_SEMI_SPACE_MIB: '4' }, [])).toBe(4);
    expect(semiSpaceCapMiB({ FREIGHT_SYNC_SEMI_SPACE_MIB: '0' }, [])).toBeUndefined();
    expect(semiSpaceCapMiB({ FREIGHT_SYNC_SEMI_SPACE_MIB: 'small' }, [])).toBeUndefined();
  });

  it('leaves a --max-semi-space-size given to node alone', () => {
    expect(semiSpaceCapMiB({}, ['--max-semi-space-size=16'])).toBeUndefined();
    expect(semiSpaceCapMiB({}, ['--max-old-space-size=512', '--max_semi_space_size=2'])).toBeUndefined();
  });
});

describe('youngGenerationGovernor', () => {
  it('lets the new space double until it holds two semi-spaces of the cap, then stops its growth, and lets it grow again if V8 shrank it', () => {
    let bytes = 2 * MIB;
    const factors: number[] = [];
    const check = youngGenerationGovernor(8, { newSpaceBytes: () => bytes, setGrowthFactor: (f) => factors.push(f) });
    check();
    expect(factors).toEqual([2]);
    bytes = 8 * MIB;
    check();
    expect(factors).toEqual([2]);
    bytes = 16 * MIB;
    check();
    check();
    expect(factors).toEqual([2, 1]);
    bytes = 4 * MIB;
    check();
    expect(factors).toEqual([2, 1, 2]);
  });
});
