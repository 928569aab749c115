import { describe, expect, it } from 'vitest';
import { describeValue, quoteText } from '../../src/util/describe-value.js';

describe('describeValue', () => {
  it('names scalars with their type and containers by kind (json words by default)', () => {
    expect(describeValue('maybe')).toBe('"maybe"');
    expect(describeValue(42)).toBe('number 42');
    expect(describeValue(true)).toBe('boolean true');
    expect(describeValue(null)).toBe('null');
    expect(describeValue(undefined)).toBe('nothing');
    expect(describeValue([1, 2, 3])).toBe('an array of 3');
    expect(describeValue({ secret: 'x' })).toBe('an object');
  });

  it('uses YAML words for the config file', () => {
    expect(describeValue('fast', 'yaml')).toBe('string "fast"');
    expect(describeValue(5, 'yaml')).toBe('number 5');
    expect(describeValue([1], 'yaml')).toBe('a list');
    expect(describeValue({}, 'yaml')).toBe('a mapping');
  });

  it('cuts long text inside the quotes', () => {
    const long = 'x'.repeat(200);
    expect(quoteText(long)).toBe(`"${'x'.repeat(60)}…"`);
    expect(describeValue(long, 'yaml')).toBe(`string "${'x'.repeat(60)}…"`);
    expect(quoteText('a"b')).toBe('"a\\"b"');
  });
});
