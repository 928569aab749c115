import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RecordBatch, SyncRecord } from '../../src/contracts/index.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'records');

export function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')) as Record<string, unknown>;
}

export function record(stream: string, key: string, data: Record<string, unknown>, overrides: Partial<SyncRecord> = {}): SyncRecord {
  return { stream, key, op: 'upsert', updatedAt: '2024-03-12T15:04:05.000Z', data, syncedAt: '2024-03-13T00:00:00.000Z', ...overrides };
}

export function batchOf(stream: string, batchId: string, records: SyncRecord[]): RecordBatch {
  return { stream, batchId, records };
}
