import type { StreamMapper } from '../../src/contracts/index.js';
import { parseMapping, type StreamMapping } from '../../src/mapping/index.js';
import { createStreamMapper } from '../../src/mapping/stream-mapper.js';

/** The per-stream mappers a connector context carries, built from compiled mappings (as the app does). */
export function mappersOf(entries: Iterable<readonly [string, StreamMapping]>): Map<string, StreamMapper> {
  return new Map([...entries].map(([stream, mapping]) => [stream, createStreamMapper(mapping)]));
}

/** A mapping with a child table, as in the CSV, SFTP and SQLite sink tests. */
export const thingsMapping = parseMapping('things', {
  table: 'things',
  key: ['id'],
  columns: [
    { name: 'id', path: 'id' },
    { name: 'text', path: 'text' },
  ],
  children: [{ table: 'thing_parts', path: 'parts', parentKey: { id: 'id' }, key: ['id', 'n'], columns: [{ name: 'n', path: '$index' }, { name: 'part', path: 'name' }] }],
});
