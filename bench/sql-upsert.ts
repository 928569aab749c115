import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { sqlConnector, sqlOptionsSchema } from '../connectors/sql/index.js';
import { createStreamMapper, loadMapping } from '../src/mapping/index.js';
import { startSimulator } from '../src/simulator/index.js';
import type { SyncRecord } from '../src/contracts/index.js';
import { silentLogger } from '../src/util/logger.js';

export interface SqlUpsertResult {
  sink: 'sqlite' | 'postgres' | 'mariadb';
  records: number;
  seconds: number;
  recordsPerSecond: number;
  /** Set when the sink could not be measured (server unreachable). */
  skipped?: string;
}

export interface SqlUpsertOptions {
  records?: number;
  /** Records per batch, as the pull engine hands them to sinks (one page). */
  batchSize?: number;
  postgresUrl?: string;
  mariadbUrl?: string;
}

/**
 * Upsert throughput of the SQL sink: `records` load records (from the simulator's dataset, mapped
 * with the default `loads` mapping: ~50 columns plus a `load_stops` child table) written in
 * batches, each batch one transaction, into a fresh SQLite file, PostgreSQL schema and MariaDB
 * database. Measures `sink.write` only (mapping included, fetching excluded).
 */
export async function benchSqlUpsert(options: SqlUpsertOptions = {}): Promise<SqlUpsertResult[]> {
  const count = options.records ?? 20_000;
  const batchSize = options.batchSize ?? 50;
  const postgresUrl = options.postgresUrl ?? process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const mariadbUrl = options.mariadbUrl ?? process.env.BENCH_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';

  const sim = await startSimulator({ variant: 'main', seed: 5, loads: count });
  const records: SyncRecord[] = [];
  const syncedAt = new Date().toISOString();
  try {
    for await (const load of sim.truth('loads')) {
      records.push({ stream: 'loads', key: String(load.reference_number), op: load.isDeleted === true ? 'delete' : 'upsert', updatedAt: String(load.updatedAt), data: load, syncedAt });
    }
  } finally {
    await sim.close();
  }
  const mapping = await loadMapping('loads', undefined, { baseDir: process.cwd(), variant: 'main' });
  const name = `bench_${process.pid}_${Date.now()}`;
  const results: SqlUpsertResult[] = [];

  const measure = async (sink: SqlUpsertResult['sink'], raw: Record<string, unknown>) => {
    const instance = await sqlConnector.create(sqlOptionsSchema.parse(raw), { instanceName: 'bench', logger: silentLogger(), baseDir: process.cwd(), mappings: new Map([['loads', createStreamMapper(mapping)]]) });
    const signal = new AbortController().signal;
    try {
      await instance.init?.(signal);
      const started = process.hrtime.bigint();
      for (let i = 0; i < records.length; i += batchSize) {
        await instance.sink!.write({ stream: 'loads', batchId: `bench-${i}`, records: records.slice(i, i + batchSize) }, signal);
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      results.push({ sink, records: records.length, seconds, recordsPerSecond: Math.round(records.length / seconds) });
    } finally {
      await instance.close();
    }
  };

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bench-sql-'));
  try {
    await measure('sqlite', { dialect: 'sqlite', filename: path.join(dir, 'bench.sqlite') });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  const admin = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
    await admin.query(`create schema "${name}"`);
    try {
      await measure('postgres', { dialect: 'postgres', url: postgresUrl, schema: name });
    } finally {
      await admin.query(`drop schema "${name}" cascade`);
    }
  } catch (error) {
    if (!results.some((r) => r.sink === 'postgres')) results.push({ sink: 'postgres', records: 0, seconds: 0, recordsPerSecond: 0, skipped: (error as Error).message });
  } finally {
    await admin.end().catch(() => undefined);
  }

  let maria: mysql.Connection | undefined;
  try {
    maria = await mysql.createConnection({ uri: mariadbUrl, connectTimeout: 3000 });
    await maria.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
    try {
      await measure('mariadb', { dialect: 'mysql', url: mariadbUrl, schema: name });
    } finally {
      await maria.query(`drop database \`${name}\``);
    }
  } catch (error) {
    if (!results.some((r) => r.sink === 'mariadb')) results.push({ sink: 'mariadb', records: 0, seconds: 0, recordsPerSecond: 0, skipped: (error as Error).message });
  } finally {
    await maria?.end().catch(() => undefined);
  }
  return results;
}
