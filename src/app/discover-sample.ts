import type { RecordOp, Row, StreamMapper, SyncRecord } from '../contracts/index.js';
import { createStreamMapper } from '../mapping/stream-mapper.js';
import { STREAM_PROBES } from '../sync/stream-probes.js';
import { describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { openApp } from './compose.js';
import { defaultMapping, streamOfVariant } from './discover.js';
import type { ValidatedDeployment } from './validate-deployment.js';

/** One sampled record: as the API sent it (secrets the mappings omit left out) and as each mapping maps it. */
export interface SampledRecord {
  key: string;
  op: RecordOp;
  raw: Record<string, unknown>;
  mapped: Array<{
    /** `default mapping`, or `connector <name>` for a sink's own mapping of the stream. */
    mapping: string;
    tables: Array<{ table: string; rows: Row[] }>;
    /** Why the mapping refused the record (what a sink would quarantine). */
    errors: string[];
  }>;
}

export interface StreamSample {
  stream: string;
  endpoint: string | null;
  /** Why there are no records to show although the call worked (push-only stream, derived records). */
  note: string | null;
  records: SampledRecord[];
  /** The call failed (no permission, endpoint missing on this variant, …). */
  error: string | null;
}

/**
 * `discover --sample N`: up to N records of each stream from the API with the configured
 * credentials (the endpoint each stream reads, one call; src/sync/stream-probes.ts), shown raw
 * and mapped with the mapping each sink of the config uses (the default mapping for a stream the
 * config does not send anywhere). Reads only: no checkpoint, sink or record store changes.
 */
export async function sampleStreams(
  deployment: ValidatedDeployment,
  options: { streams: readonly string[] | undefined; count: number; logger: Logger; signal: AbortSignal },
): Promise<StreamSample[]> {
  const { loaded } = deployment;
  const variant = loaded.config.api.variant;
  const definitions = options.streams
    ? options.streams.map((name) => streamOfVariant(name, variant))
    : deployment.streams.map((s) => s.definition);
  const app = await openApp(loaded, { logger: options.logger, withConnectors: false, streams: [], signal: options.signal });
  try {
    const samples: StreamSample[] = [];
    for (const definition of definitions) {
      const probe = STREAM_PROBES[definition.name];
      if (!probe) {
        samples.push({ stream: definition.name, endpoint: null, note: 'fed by the webhook receiver; no endpoint to sample', records: [], error: null });
        continue;
      }
      const fallback = createStreamMapper(await defaultMapping(definition.name, variant));
      const mappers: Array<{ label: string; mapper: StreamMapper }> = deployment.connectors
        .filter((c) => c.mappings.has(definition.name))
        .map((c) => ({ label: `connector ${c.name}`, mapper: createStreamMapper(c.mappings.get(definition.name)!) }));
      if (mappers.length === 0) mappers.push({ label: 'default mapping', mapper: fallback });
      try {
        const result = await probe(app.client, options.signal, options.count);
        if (!result.streamRecords) {
          samples.push({
            stream: definition.name,
            endpoint: result.endpoint,
            note: `its records are built from ${result.endpoint} by downloading each document's file; run a sync to see them`,
            records: [],
            error: null,
          });
          continue;
        }
        const syncedAt = new Date().toISOString();
        const records = result.items.map((data): SampledRecord => {
          const record: SyncRecord = { stream: definition.name, key: definition.key(data), op: definition.op(data), updatedAt: definition.updatedAt(data), data, syncedAt };
          // Leave out what any mapping leaves out of `_raw` (credentials such as a customer's portPassword).
          const raw = [fallback, ...mappers.map((m) => m.mapper)].reduce((r, mapper) => mapper.rawOf({ ...record, data: r }), record.data);
          const mapped = mappers.map(({ label, mapper }) => {
            const { batch, errors } = mapper.map({ stream: definition.name, batchId: 'discover-sample', records: [record], runId: 'discover' });
            return {
              mapping: label,
              tables: batch.tables.map((t) => ({ table: t.table, rows: t.rows })),
              errors: errors.flatMap((e) => e.errors.map((p) => p.message)),
            };
          });
          return { key: record.key, op: record.op, raw, mapped };
        });
        samples.push({ stream: definition.name, endpoint: result.endpoint, note: records.length === 0 ? 'the endpoint answered with no records' : null, records, error: null });
      } catch (error) {
        samples.push({ stream: definition.name, endpoint: null, note: null, records: [], error: describeError(error) });
      }
    }
    return samples;
  } finally {
    await app.close();
  }
}
