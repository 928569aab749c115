/**
 * Seeded randomness. Two kinds: `hashInt` gives a stable value per (seed, position, salt) so a record
 * can be generated lazily and identically every time; `Prng` is a sequence for things that happen
 * in order (faults, mutator steps), so a run with the same seed and the same request order repeats.
 */

export function mix32(value: number): number {
  let a = value | 0;
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  a = Math.imul(a ^ (a >>> 13), 0xc2b2ae35);
  return (a ^ (a >>> 16)) >>> 0;
}

/** Stable 32-bit hash of (seed, position, salt). */
export function hashInt(seed: number, position: number, salt: number): number {
  const hi = Math.floor(position / 0x1_0000_0000);
  return mix32(mix32(mix32(seed ^ Math.imul(salt + 1, 0x9e3779b9)) ^ (position >>> 0)) ^ hi);
}

/** Stable float in [0, 1). */
export function hashUnit(seed: number, position: number, salt: number): number {
  return hashInt(seed, position, salt) / 0x1_0000_0000;
}

export function hashPick<T>(items: readonly T[], seed: number, position: number, salt: number): T {
  return items[hashInt(seed, position, salt) % items.length] as T;
}

/** mulberry32: small, fast, good enough for simulation. */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = mix32(seed) || 0x6d2b79f5;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  }

  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive);
  }

  chance(probability: number): boolean {
    return probability > 0 && this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}
