import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely';
import { probeMariadb, probePostgres, requireService } from './services.js';

export type TargetKind = 'sqlite' | 'postgres' | 'mariadb';

/**
 * A database for one test file: a fresh SQLite folder, a uniquely named PostgreSQL schema, or a
 * uniquely named MariaDB database — dropped by `drop()`. `options` are the connector options
 * pointing at it; `reader` is a separate connection for assertions.
 */
export interface SqlTarget {
  readonly kind: TargetKind;
  /** Connector options (dialect, connection, schema). */
  readonly options: Record<string, unknown>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly reader: Kysely<any>;
  /** `schema.table` for the reader. */
  table(name: string): string;
  /** Drops the schema / database / folder and closes the reader. */
  drop(): Promise<void>;
}

/** Which targets are usable: SQLite always; servers after `requireService` (warns, or throws in CI). */
export async function availableTargets(): Promise<Record<TargetKind, string | undefined>> {
  const pg = await probePostgres();
  const maria = await probeMariadb();
  return {
    sqlite: 'sqlite',
    postgres: requireService('PostgreSQL', pg) ? pg.url : undefined,
    mariadb: requireService('MariaDB', maria) ? maria.url : undefined,
  };
}

const unique = (label: string) => `fs_${label}_${process.pid}_${randomBytes(3).toString('hex')}`.toLowerCase();

export async function createTarget(kind: TargetKind, url: string | undefined, label: string): Promise<SqlTarget> {
  switch (kind) {
    case 'sqlite': {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `freight-sync-sql-${label}-`));
      const filename = path.join(dir, 'erp.sqlite');
      const reader = new Kysely({ dialect: new SqliteDialect({ database: async () => new Database(filename) }) });
      return {
        kind,
        options: { dialect: 'sqlite', filename },
        reader,
        table: (name) => name,
        drop: async () => {
          await reader.destroy();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    case 'postgres': {
      const { default: pg } = await import('pg');
      const schema = unique(label);
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      await pool.query(`create schema "${schema}"`);
      const reader = new Kysely({ dialect: new PostgresDialect({ pool }) });
      return {
        kind,
        options: { dialect: 'postgres', url, schema, pool: { max: 4 } },
        reader,
        table: (name) => `${schema}.${name}`,
        drop: async () => {
          await pool.query(`drop schema if exists "${schema}" cascade`);
          await reader.destroy();
        },
      };
    }
    case 'mariadb': {
      const mysql = await import('mysql2');
      const database = unique(label);
      const pool = mysql.createPool({ uri: url, connectionLimit: 2, timezone: 'Z', charset: 'utf8mb4' });
      await pool.promise().query(`create database \`${database}\` character set utf8mb4 collate utf8mb4_bin`);
      const reader = new Kysely({ dialect: new MysqlDialect({ pool }) });
      return {
        kind,
        options: { dialect: 'mysql', url, schema: database, pool: { max: 4 } },
        reader,
        table: (name) => `${database}.${name}`,
        drop: async () => {
          await pool.promise().query(`drop database if exists \`${database}\``);
          await reader.destroy();
        },
      };
    }
  }
}
