import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FALSE_WORDS, TRUE_WORDS, parseBoolean } from '../../src/util/boolean.js';
import { booleanValue } from '../../src/util/zod-values.js';
import { applyTransforms } from '../../src/mapping/transforms.js';
import { bool } from '../../src/outbound/commands/field-values.js';
import { booleanOption } from '../../src/sync/streams/common.js';
import { parseConfig } from '../../src/config/parse-config.js';
import { minimalRaw } from '../helpers/config-fixtures.js';

describe('parseBoolean: the one yes/no vocabulary', () => {
  it.each([...TRUE_WORDS, 'TRUE', ' Yes ', 'ON', 'Y'])('%j is true', (word) => expect(parseBoolean(word)).toBe(true));
  it.each([...FALSE_WORDS, 'False', ' NO', 'Off', 'N'])('%j is false', (word) => expect(parseBoolean(word)).toBe(false));

  it('takes booleans and the numbers 1 and 0', () => {
    expect([parseBoolean(true), parseBoolean(false), parseBoolean(1), parseBoolean(0)]).toEqual([true, false, true, false]);
  });

  it.each(['', 'maybe', 't', 'f', 'enabled', 2, -1, null, undefined, {}, []])('%j is not a boolean', (value) => {
    expect(parseBoolean(value)).toBeUndefined();
  });
});

describe('every boolean parser uses it', () => {
  const words = ['yes', 'off', 'ON', '1', '0', 'n'];
  const expected = [true, false, true, true, false, false];

  it('config values (booleanValue), with a message naming the words', () => {
    const schema = booleanValue();
    expect(words.map((w) => schema.parse(w))).toEqual(expected);
    const result = z.object({ ssl: schema }).safeParse({ ssl: 'maybe' });
    expect(result.error?.issues[0]?.message).toBe('expected true/false, yes/no, y/n, on/off or 1/0, got string "maybe"');
  });

  it('stream options', () => {
    expect(words.map((w) => booleanOption.parse(w))).toEqual(expected);
  });

  it('mapping boolean transforms', () => {
    const transforms = [{ type: 'boolean', true: 'Y', false: 'N' }] as unknown as Parameters<typeof applyTransforms>[1];
    expect(words.map((w) => applyTransforms(w, transforms))).toEqual(expected.map((b) => (b ? 'Y' : 'N')));
  });

  it('outbound request fields', () => {
    expect(words.map((w) => bool().parse(w))).toEqual(expected);
  });

  it('the config file (outbound.enabled, log.pretty, stream enabled)', () => {
    const raw = minimalRaw();
    raw.outbound = { enabled: 'no' };
    raw.log = { pretty: 'on' };
    raw.sync.streams.loads.enabled = 'YES';
    const config = parseConfig(raw);
    expect(config.outbound.enabled).toBe(false);
    expect(config.log.pretty).toBe(true);
    expect(config.sync.streams.loads?.enabled).toBe(true);
  });
});
