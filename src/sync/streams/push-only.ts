import { z } from 'zod';
import type { RawRecord, StreamDefinition, StreamName } from '../stream-definition.js';
import { noOptions, requireKey, stringField } from './common.js';

/**
 * A stream the webhook receiver feeds and nothing polls (`pushOnly`): its records only ever
 * arrive through `deliverBatch` from src/webhooks. It has no cursor; `read` yields nothing, so
 * even a `sync --stream` on it is a harmless no-op.
 */
export function pushOnlyStream(spec: {
  name: StreamName;
  description: string;
  keyFields: string[];
  updatedAtFields: string[];
}): StreamDefinition<null, Record<string, never>> {
  return {
    name: spec.name,
    description: spec.description,
    variants: ['main', 'brokerage'],
    pagedEndpoint: null,
    optionsSchema: noOptions,
    cursorSchema: z.null(),
    cursorKind: 'webhook push',
    pushOnly: true,
    keyDescription: spec.keyFields.length > 1 ? `${spec.keyFields[0]} (else ${spec.keyFields.slice(1).join(', ')})` : spec.keyFields.join(''),
    key: (record: RawRecord) => requireKey(spec.name, record, ...spec.keyFields),
    op: () => 'upsert',
    updatedAt: (record: RawRecord) => stringField(record, ...spec.updatedAtFields),
    resetCursor: () => null,
    // eslint-disable-next-line require-yield
    async *read() {
      return;
    },
  };
}
