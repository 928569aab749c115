import type { MapOptions, MapResult, StreamMapper } from '../contracts/mapping.js';
import type { RecordBatch, SyncRecord } from '../contracts/records.js';
import type { StreamMapping } from './compile-mapping.js';
import { mapBatch } from './map-batch.js';
import { deleteAtSegments } from './path.js';

/** The mapper a sink receives for one stream (see `StreamMapper` in the contracts). */
export function createStreamMapper(mapping: StreamMapping): StreamMapper {
  return {
    mapping,
    map: (batch: RecordBatch, options?: MapOptions): MapResult => mapBatch(batch, mapping, options),
    rawOf(record: SyncRecord): Record<string, unknown> {
      if (mapping.root.rawOmit.length === 0) return record.data;
      const data = structuredClone(record.data);
      for (const segments of mapping.root.rawOmit) deleteAtSegments(data, segments);
      return data;
    },
  };
}
