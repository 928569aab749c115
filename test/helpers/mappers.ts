import type { StreamMapper } from '../../src/contracts/index.js';
import type { StreamMapping } from '../../src/mapping/index.js';
import { createStreamMapper } from '../../src/mapping/stream-mapper.js';

/** The per-stream mappers a connector context carries, built from compiled mappings (as the app does). */
export function mappersOf(entries: Iterable<readonly [string, StreamMapping]>): Map<string, StreamMapper> {
  return new Map([...entries].map(([stream, mapping]) => [stream, createStreamMapper(mapping)]));
}
