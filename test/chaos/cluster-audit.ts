import type pg from 'pg';
import { holderPid, type LeaseRef } from './cluster-replicas.js';

/**
 * The commit audit of the cluster chaos run: statement triggers on the tables the account's work
 * writes (checkpoints, runs, webhook inbox settlements — not the receiver's arming, see below —, outbox) append one row per statement to
 * `chaos_commits`: the writer's application_name (one per replica process, PGAPPNAME), and the
 * lease row's holder and epoch as that statement saw them. The audit row is part of the writer's
 * transaction: a write refused by the fence (LeaseLostError, rollback) leaves no audit row, so
 * the table holds exactly the writes that COMMITTED.
 *
 * "No write with a stale epoch committed" is then checked as: every audited write of a replica
 * process happened while the lease row named that process as the holder. A process that lost the
 * lease (SIGSTOP beyond the TTL, another replica claimed) and still committed would show up as a
 * row whose holder is another pid (or none). What this cannot see: a write of an older tenure of
 * the SAME process after it re-claimed (the holder id is per process); the fence's epoch check
 * covers that case and is tested in test/integration/account-leases.test.ts.
 */
const AUDITED: Array<{ table: string; ops: string }> = [
  { table: 'checkpoints', ops: 'insert or update or delete' },
  // Run history is unfenced by design (src/state/stores/index.ts): audited, counted apart.
  { table: 'runs', ops: 'insert or update' },
  { table: 'outbox', ops: 'insert or update' },
];

/** Creates the audit table and triggers in `schema` (after migrations, before any replica starts). */
export async function installCommitAudit(client: pg.Client, schema: string, ref?: LeaseRef): Promise<void> {
  const s = `"${schema}"`;
  // With several accounts the lease rows live in the shared schema, one per account.
  const lease = ref ? `"${ref.schema}".account_leases where account = '${ref.account}'` : `${s}.account_leases`;
  await client.query(`create table ${s}.chaos_commits (
    id bigserial primary key, at timestamptz not null default clock_timestamp(),
    at_ms_raw bigint not null default (extract(epoch from clock_timestamp()) * 1000)::bigint,
    tbl text not null, op text not null, app text not null, holder text, epoch bigint)`);
  await client.query(`create function ${s}.chaos_audit() returns trigger language plpgsql as $$
    begin
      insert into ${s}.chaos_commits (tbl, op, app, holder, epoch)
        select TG_TABLE_NAME, TG_OP, current_setting('application_name'), l.holder, l.epoch
          from (select 1) one left join (select holder, epoch from ${lease} order by epoch desc limit 1) l on true;
      return null;
    end $$`);
  for (const { table, ops } of AUDITED) {
    await client.query(`create trigger chaos_audit_${table} after ${ops} on ${s}.${table} for each statement execute function ${s}.chaos_audit()`);
  }
  // The webhook inbox: inserts come from the receiver on every replica (not account work), and so
  // do updates that arm a row again (arm_count moves: the same body received again). Settlements
  // (done, failed, retry, re-arm by command) leave arm_count as it was: those are account work.
  await client.query(`create function ${s}.chaos_audit_inbox() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from new_rows n join old_rows o on o.id = n.id where n.arm_count = o.arm_count) then
        insert into ${s}.chaos_commits (tbl, op, app, holder, epoch)
          select TG_TABLE_NAME, TG_OP, current_setting('application_name'), l.holder, l.epoch
            from (select 1) one left join (select holder, epoch from ${lease} order by epoch desc limit 1) l on true;
      end if;
      return null;
    end $$`);
  await client.query(
    `create trigger chaos_audit_webhook_inbox after update on ${s}.webhook_inbox referencing old table as old_rows new table as new_rows for each statement execute function ${s}.chaos_audit_inbox()`,
  );
  // Each row's settlements as done, and its re-openings (done → pending: the same body again, or
  // `rejected retry`), committed with the writer's transaction: "settled twice" is then counted
  // from what committed, not from the replicas' logs (a SIGKILL between a failed attempt's commit
  // and its log line made a failure look like a second settlement).
  await client.query(`create table ${s}.chaos_settlements (
    id bigserial primary key, inbox_id bigint not null, kind text not null, app text not null, at timestamptz not null default clock_timestamp())`);
  await client.query(`create function ${s}.chaos_audit_settlements() returns trigger language plpgsql as $$
    begin
      insert into ${s}.chaos_settlements (inbox_id, kind, app)
        select n.id, case when n.state = 'done' then 'done' else 'reopened' end, current_setting('application_name')
          from new_rows n join old_rows o on o.id = n.id
          where (n.state = 'done' and (o.state <> 'done' or n.attempts <> o.attempts)) or (o.state = 'done' and n.state <> 'done');
      return null;
    end $$`);
  await client.query(
    `create trigger chaos_audit_settlements after update on ${s}.webhook_inbox referencing old table as old_rows new table as new_rows for each statement execute function ${s}.chaos_audit_settlements()`,
  );
}

export interface Settlements {
  /** Times the row was settled as done. */
  done: number;
  /** Times a settled row was made pending again (a new change with the same body, `rejected retry`). */
  reopened: number;
}

/** Settled as done more often than it was re-opened after a settlement: one event processed twice. */
export const settledTwice = (s: Settlements | undefined): boolean => (s?.done ?? 0) > 1 + (s?.reopened ?? 0);

/** Per inbox row: how often it was settled as done, and re-opened after a settlement (from `chaos_settlements`). */
export async function readSettlements(client: pg.Client): Promise<Map<number, Settlements>> {
  const { rows } = await client.query<{ inbox_id: string; done: string; reopened: string }>(
    `select inbox_id::text, count(*) filter (where kind = 'done')::text as done, count(*) filter (where kind = 'reopened')::text as reopened from chaos_settlements group by inbox_id`,
  );
  return new Map(rows.map((r) => [Number(r.inbox_id), { done: Number(r.done), reopened: Number(r.reopened) }]));
}

export interface AuditResult {
  /** Audited statements by replica processes. */
  commits: number;
  /** Of those to fenced tables, committed while the lease row named another process (or nobody) as holder. */
  staleCommits: number;
  /** Run-history statements (unfenced by design) by a process that was not the holder: its own run rows closed after the loss. */
  unfencedByNonHolder: number;
  /** Epochs seen by a process's writes that went backwards (per process, in commit order). */
  epochRegressions: number;
  examples: string[];
}

/** Checks every audited statement of a replica process (application_name `chaos-r…`). */
export async function checkCommitAudit(client: pg.Client, pidByApp: ReadonlyMap<string, number>): Promise<AuditResult> {
  const { rows } = await client.query<{ id: string; tbl: string; op: string; app: string; holder: string | null; epoch: string | null; at: Date }>(
    `select id::text, tbl, op, app, holder, epoch::text, at from chaos_commits where app like 'chaos-r%' order by id`,
  );
  const result: AuditResult = { commits: rows.length, staleCommits: 0, unfencedByNonHolder: 0, epochRegressions: 0, examples: [] };
  const lastEpoch = new Map<string, number>();
  for (const row of rows) {
    const pid = pidByApp.get(row.app);
    if (row.tbl === 'runs') {
      // Unfenced by design: counted, not judged (nor in the epoch order below).
      if (pid === undefined || holderPid(row.holder) !== pid) result.unfencedByNonHolder += 1;
      continue;
    }
    if (pid === undefined || holderPid(row.holder) !== pid) {
      result.staleCommits += 1;
      result.examples.push(`${row.app} (pid ${pid}) ${row.op} ${row.tbl} at ${row.at.toISOString()} while the holder was ${row.holder ?? 'nobody'} (epoch ${row.epoch})`);
    }
    const epoch = Number(row.epoch ?? -1);
    if (epoch < (lastEpoch.get(row.app) ?? -1)) {
      result.epochRegressions += 1;
      result.examples.push(`${row.app} wrote ${row.tbl} under epoch ${epoch} after epoch ${lastEpoch.get(row.app)}`);
    }
    lastEpoch.set(row.app, Math.max(epoch, lastEpoch.get(row.app) ?? -1));
  }
  result.examples = result.examples.slice(0, 8);
  return result;
}
