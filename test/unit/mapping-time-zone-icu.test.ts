import { afterEach, describe, expect, it } from 'vitest';
import { transformSchema } from '../../src/mapping/mapping-schema.js';

const original = Intl.DateTimeFormat;

afterEach(() => {
  Intl.DateTimeFormat = original;
});

describe('date transform time zone check', () => {
  it('asks ICU nothing for UTC (its time-zone data would stay resident, issue 14) and still checks other zones', () => {
    const zones: unknown[] = [];
    Intl.DateTimeFormat = new Proxy(original, {
      construct(target, args: ConstructorParameters<typeof Intl.DateTimeFormat>) {
        zones.push(args[1]?.timeZone);
        return Reflect.construct(target, args) as Intl.DateTimeFormat;
      },
    });
    transformSchema.parse('date');
    transformSchema.parse({ type: 'date', timeZone: 'UTC' });
    expect(zones).toEqual([]);
    transformSchema.parse({ type: 'date', timeZone: 'Europe/Berlin' });
    expect(zones).toEqual(['Europe/Berlin']);
  });
});
