import { describe, expect, it, vi } from 'vitest';
import { toDecimalText, type DecimalRounding } from '../../src/mapping/decimal.js';
import { Prng } from '../../src/simulator/prng.js';

/** big.js, counting the decimals it makes. */
const made = vi.hoisted(() => ({ count: 0 }));
vi.mock('big.js', async (importOriginal) => {
  const actual = await importOriginal<{ default: (value: string) => unknown }>();
  const Real = actual.default;
  const Counting = Object.assign(function Counting(value: string) {
    made.count += 1;
    return Real(value);
  }, Real);
  Counting.prototype = (Real as unknown as { prototype: object }).prototype;
  return { ...actual, default: Counting };
});

/** The outcome of a conversion: its text, or the error it threw. */
function outcome(convert: () => string | null): string {
  try {
    return `ok ${String(convert())}`;
  } catch (error) {
    return `error ${(error as Error).name}: ${(error as Error).message}`;
  }
}

function randomAmount(prng: Prng): unknown {
  const digits = (n: number): string => Array.from({ length: n }, () => String(prng.int(10))).join('');
  const text = `${prng.pick(['', '', '-', '+'])}${prng.chance(0.1) ? '0' : ''}${digits(prng.int(8) + 1)}${prng.chance(0.6) ? `.${digits(prng.int(9))}` : ''}${prng.chance(0.05) ? `e${prng.int(30) - 15}` : ''}`;
  switch (prng.int(5)) {
    case 0:
      return Number(text);
    case 1:
      return prng.pick([0, -0, 1668, -81.0912, 0.1 + 0.2, 1e21, 1e-7, 12.5, 3, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, -5]);
    case 2:
      return prng.pick(['', ' ', '0', '-0', '-0.00', '0.00', '.5', '5.', ' 12.50 ', '007', '1e3', 'abc', '12,5', '+3', '-']);
    case 3:
      return prng.pick([null, true, {}, ['1']]);
    default:
      return text;
  }
}

describe('decimal text of an amount', () => {
  it('common amounts (numbers, decimal text within the scale) are written without big.js', () => {
    made.count = 0;
    const cases: [unknown, number, string][] = [
      [1668, 2, '1668.00'],
      [0, 2, '0.00'],
      ['0', 6, '0.000000'],
      [12.5, 2, '12.50'],
      ['12.50', 2, '12.50'],
      [-3.25, 2, '-3.25'],
      [' 7 ', 0, '7'],
    ];
    for (const [value, scale, text] of cases) expect(toDecimalText(value, { scale, round: 'half-up' })).toBe(text);
    expect(made.count).toBe(0);
  });

  it('any amount, scale and rounding: the same text or error as through big.js', () => {
    const prng = new Prng(21);
    let viaBig = 0;
    for (let i = 0; i < 5000; i++) {
      const value = randomAmount(prng);
      const scale = prng.int(9);
      const round = prng.pick<DecimalRounding>(['half-up', 'half-even', 'error']);
      // A precision far beyond any value here takes the big.js way for every value.
      const expected = outcome(() => toDecimalText(value, { scale, round, precision: 10_000 }));
      made.count = 0;
      expect(outcome(() => toDecimalText(value, { scale, round })), `${String(value)} scale ${scale} ${round}`).toBe(expected);
      if (made.count > 0) viaBig += 1;
    }
    // Both ways are taken.
    expect(viaBig).toBeGreaterThan(1000);
    expect(viaBig).toBeLessThan(4500);
  });
});
