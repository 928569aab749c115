import type { Kysely, Migration } from 'kysely';

/**
 * `daemon_owner`: the `run` process that owns this state store (at most one row). It records host,
 * pid, start and a heartbeat the daemon renews, so `reset` can refuse to move a checkpoint under
 * a running daemon (which would overwrite it with its own), and a SIGKILLed daemon blocks nothing:
 * its row is ignored once its pid is gone (same host) or its heartbeat is stale (any host).
 */
export const daemonOwner: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('daemon_owner')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('heartbeat_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('daemon_owner').execute();
  },
};
