import { describe, expect, it } from 'vitest';
import { mistypedNumberSettings } from '../../src/cli/mistyped-settings.js';

describe('numeric memory and tier-up settings that are mistyped', () => {
  it('names each setting that is not a whole number ≥ 0 and what applies instead', () => {
    expect(mistypedNumberSettings({ FREIGHT_SYNC_SEMI_SPACE_MIB: '4MiB', FREIGHT_SYNC_HEAP_GROWING_PERCENT: '-5', FREIGHT_SYNC_INTERRUPT_BUDGET_KIB: '1.5' })).toEqual([
      'FREIGHT_SYNC_SEMI_SPACE_MIB=4MiB is not a whole number ≥ 0: the young generation is not capped',
      'FREIGHT_SYNC_HEAP_GROWING_PERCENT=-5 is not a whole number ≥ 0: V8\'s own heap growth applies',
      'FREIGHT_SYNC_INTERRUPT_BUDGET_KIB=1.5 is not a whole number ≥ 0: V8\'s own interrupt budget applies',
    ]);
  });

  it('says nothing for unset, empty, 0 (switched off) or whole values', () => {
    expect(mistypedNumberSettings({})).toEqual([]);
    expect(mistypedNumberSettings({ FREIGHT_SYNC_SEMI_SPACE_MIB: '', FREIGHT_SYNC_HEAP_GROWING_PERCENT: '0', FREIGHT_SYNC_INTERRUPT_BUDGET_KIB: ' 264 ' })).toEqual([]);
  });
});
