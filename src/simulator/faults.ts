import type { FaultKind, SimulatorOptions } from './options.js';
import { Prng } from './prng.js';

/**
 * Decides, per request, whether to misbehave and how. Seeded so a test run with the same request
 * order sees the same faults. Token requests fault at half the rate: they must still be able to
 * fail, but a client must be able to get a token at all.
 */
export class FaultInjector {
  private readonly rng: Prng;

  constructor(seed: number, private readonly config: () => SimulatorOptions['faults']) {
    this.rng = new Prng(seed ^ 0xfa17);
  }

  roll(isTokenRoute: boolean): FaultKind | null {
    const { rate, kinds } = this.config();
    if (rate <= 0 || kinds.length === 0) return null;
    const effective = isTokenRoute ? rate / 2 : rate;
    if (!this.rng.chance(effective)) return null;
    return this.rng.pick(kinds);
  }

  /** For `truncated`: cut the body at a point strictly inside it, and choose how to end. */
  truncation(length: number): { cutAt: number; honestLength: boolean } {
    const cutAt = Math.max(1, Math.min(length - 1, Math.floor(length * (0.2 + this.rng.next() * 0.6))));
    return { cutAt, honestLength: this.rng.chance(0.5) };
  }

  coin(probability: number): boolean {
    return this.rng.chance(probability);
  }
}

/**
 * Whether this write (a load, customer or invoice create, a load delete) takes effect and is then
 * answered with a 502 or a dropped socket (`ambiguousCreateRate`).
 */
export function ambiguousWrite(sim: { options: Pick<SimulatorOptions, 'ambiguousCreateRate'>; faults: FaultInjector }): boolean {
  return sim.options.ambiguousCreateRate > 0 && sim.faults.coin(sim.options.ambiguousCreateRate);
}

export const HTML_ERROR_PAGE = `<!DOCTYPE html>
<html><head><title>502 Bad Gateway</title></head>
<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>
`;
