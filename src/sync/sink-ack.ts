import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { RecordBatch, RecordSink, SyncRecord } from '../contracts/index.js';
import { FreightSyncError } from '../util/errors.js';

export interface NamedSink {
  name: string;
  sink: RecordSink;
}

/** A sink resolved with something that is not a `SinkAck` (a plug-in bug): the batch counts as failed. */
export class SinkAckError extends FreightSyncError {
  constructor(message: string) {
    super('SINK_ACK_INVALID', message);
  }
}

/** `void` (all accepted) or `{ rejected: [{ key, reason }] }` (src/contracts/connector.ts). */
const sinkAckSchema = z.union([
  z.undefined(),
  z.object({ rejected: z.array(z.object({ key: z.string(), reason: z.string() })) }),
]);

/**
 * Writes `batch` to one sink and returns the keys it refused, with the reason. The answer is a
 * plug-in boundary: it is validated, and a key that is not in the batch fails the write (the
 * engine could not tell which record was meant, so it must not mark any as delivered).
 */
export async function writeToSink(target: NamedSink, batch: RecordBatch, signal: AbortSignal): Promise<Map<string, string>> {
  const answer = await target.sink.write(batch, signal);
  const parsed = sinkAckSchema.safeParse(answer);
  const where = `sink ${target.name}, stream ${batch.stream}, batch ${batch.batchId}`;
  if (!parsed.success) throw new SinkAckError(`${where}: write() resolved with ${JSON.stringify(answer)?.slice(0, 200)}; expected nothing or { rejected: [{ key, reason }] }`);
  const refused = new Map<string, string>();
  if (!parsed.data) return refused;
  const keys = new Set(batch.records.map((r) => r.key));
  for (const { key, reason } of parsed.data.rejected) {
    if (!keys.has(key)) throw new SinkAckError(`${where}: rejected key "${key}" is not in the batch`);
    // A record refused for several reasons (two columns) keeps them all.
    refused.set(key, refused.has(key) ? `${refused.get(key)}; ${reason}` : reason);
  }
  return refused;
}

/**
 * A batch whose id is deterministic for the position AND the content: a replayed batch replaces
 * its file, a different batch at the same position (new content) never overwrites an earlier one.
 */
export function buildBatch(stream: string, position: string, items: ReadonlyArray<{ record: SyncRecord; hash: string }>, runId: string): RecordBatch {
  const digest = createHash('sha1');
  for (const item of items) digest.update(`${item.record.key}\u0000${item.hash}\u0001`);
  return { stream, batchId: `${position}_${digest.digest('hex').slice(0, 12)}`, records: items.map((t) => t.record), runId };
}

/**
 * Asks every sink that stages writes to publish them (`RecordSink.flush`). Each sink is flushed
 * even when another fails; the failures come back as messages naming the sink, for the caller to
 * report. Nothing is lost by a failed flush: the data is durable, the next flush or start publishes it.
 */
export async function flushSinks(sinks: readonly NamedSink[], signal: AbortSignal): Promise<string[]> {
  const failures: string[] = [];
  for (const { name, sink } of sinks) {
    if (!sink.flush) continue;
    try {
      await sink.flush(signal);
    } catch (error) {
      failures.push(`sink ${name}: publishing staged writes failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return failures;
}
