import pg from 'pg';
import { startCli, type CliChild } from './daemon-process.js';

/**
 * N `freight-sync run` replicas of one config on PostgreSQL state (child processes), and what the
 * cluster chaos run and the failover bench read from the shared state: the account's lease row,
 * the checkpoints, and the commit audit (cluster-audit.ts).
 *
 * The state pool sets no `application_name`; node-postgres takes it from PGAPPNAME, so each
 * replica process gets `PGAPPNAME=chaos-r<i>-g<generation>` and its connections are found (and
 * terminated) in pg_stat_activity by that name.
 */
export interface Replica {
  readonly index: number;
  /** Restarts of this slot so far (0 for the first process). */
  generation: number;
  readonly httpPort: number;
  readonly webhookPort: number;
  run: CliChild;
  appName: string;
  /** Set while SIGSTOPped. */
  stopped: boolean;
  /** Set when the runner killed it on purpose (an exit then is expected). */
  killed: boolean;
}

export interface ReplicaSetOptions {
  configFile: string;
  cwd: string;
  logFile: string;
  env: Record<string, string>;
  ports: Array<{ http: number; webhook: number }>;
  logLevel: string;
  /** Starts one CLI process; default `startCli` (the bench passes its own, for the built CLI's path under dist/). */
  start?: typeof startCli;
}

export class ReplicaSet {
  readonly replicas: Replica[] = [];
  /** application_name → pid of every process ever started (the audit names writers by it). */
  readonly pidByApp = new Map<string, number>();

  constructor(private readonly options: ReplicaSetOptions) {}

  startAll(): void {
    this.options.ports.forEach((ports, index) => {
      const replica: Replica = { index, generation: 0, httpPort: ports.http, webhookPort: ports.webhook, run: undefined as unknown as CliChild, appName: '', stopped: false, killed: false };
      this.replicas.push(replica);
      this.spawn(replica);
    });
  }

  private spawn(replica: Replica): void {
    replica.appName = `chaos-r${replica.index}-g${replica.generation}`;
    replica.run = (this.options.start ?? startCli)(['run', '-c', this.options.configFile, '--log-level', this.options.logLevel], {
      env: {
        ...this.options.env,
        PGAPPNAME: replica.appName,
        FS_HTTP_LISTEN: `127.0.0.1:${replica.httpPort}`,
        FS_WEBHOOK_LISTEN: `127.0.0.1:${replica.webhookPort}`,
      },
      logFile: this.options.logFile,
      cwd: this.options.cwd,
    });
    replica.stopped = false;
    replica.killed = false;
    this.pidByApp.set(replica.appName, replica.run.child.pid ?? -1);
  }

  restart(replica: Replica): void {
    replica.generation += 1;
    this.spawn(replica);
  }

  async kill(replica: Replica): Promise<void> {
    replica.killed = true;
    if (replica.stopped) replica.run.child.kill('SIGCONT');
    replica.run.child.kill('SIGKILL');
    await replica.run.exited;
  }

  byPid(pid: number): Replica | undefined {
    return this.replicas.find((r) => r.run.child.pid === pid && alive(r));
  }

  /** The replica whose pid the lease holder id (`host:pid:random`) names, if it is one of ours and alive. */
  byHolder(holder: string | null | undefined): Replica | undefined {
    const pid = holderPid(holder);
    return pid === undefined ? undefined : this.byPid(pid);
  }

  /** Replicas that exited without being killed by the runner. */
  unexpectedExits(): Replica[] {
    return this.replicas.filter((r) => !alive(r) && !r.killed);
  }

  /**
   * A rolling restart, as an operator deploys a config change: each live replica in turn gets
   * SIGTERM (drains, releases its leases), and once it exited it starts again with the current env.
   */
  async rollingRestart(timeoutMs: number): Promise<string[]> {
    const problems: string[] = [];
    for (const r of this.replicas.filter(alive)) {
      if (r.stopped) r.run.child.kill('SIGCONT');
      // As a rolling deploy does: the replica is up (restarted after a kill, it may still be
      // starting, before it handles SIGTERM) before it is asked to stop.
      await this.waitReady(r, timeoutMs);
      r.killed = true;
      r.run.child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      const first = await Promise.race([r.run.exited, timeout]);
      clearTimeout(timer);
      if (first === 'timeout') {
        problems.push(`rolling restart: ${r.appName} did not stop within ${timeoutMs} ms of SIGTERM`);
        r.run.child.kill('SIGKILL');
        await r.run.exited;
      } else if (first.code !== 0) problems.push(`rolling restart: ${r.appName} exited with ${first.code ?? first.signal} on SIGTERM`);
      this.restart(r);
      // The next one is stopped only once this one is up again, and the restart ends with all up
      // (chaos run 15: the run's final SIGTERM reached the last replica 100 ms after its spawn).
      if (!(await this.waitReady(r, timeoutMs))) problems.push(`rolling restart: ${r.appName} did not print "daemon running" within ${timeoutMs} ms`);
    }
    return problems;
  }

  /** Waits until the replica printed its ready line (or exited); false when `timeoutMs` passed first. */
  async waitReady(r: Replica, timeoutMs: number): Promise<boolean> {
    const upBy = Date.now() + timeoutMs;
    while (alive(r) && !r.run.ready() && Date.now() < upBy) await new Promise((resolve) => setTimeout(resolve, 200));
    return r.run.ready() || !alive(r);
  }

  /** SIGTERM to every live replica; returns the exit of each. */
  async terminateAll(timeoutMs: number): Promise<Array<{ replica: string; code: number | null; signal: string | null; timedOut: boolean }>> {
    const live = this.replicas.filter(alive);
    for (const r of live) {
      if (r.stopped) r.run.child.kill('SIGCONT');
      r.killed = true;
      r.run.child.kill('SIGTERM');
    }
    return Promise.all(
      live.map(async (r) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
        const first = await Promise.race([r.run.exited, timeout]);
        clearTimeout(timer);
        if (first !== 'timeout') return { replica: r.appName, code: first.code, signal: first.signal, timedOut: false };
        r.run.child.kill('SIGKILL');
        const e = await r.run.exited;
        return { replica: r.appName, code: e.code, signal: e.signal, timedOut: true };
      }),
    );
  }

  /** For a finally: SIGKILL whatever is still running. */
  async killAll(): Promise<void> {
    for (const r of this.replicas) if (alive(r)) await this.kill(r);
  }
}

export function alive(r: Replica): boolean {
  return r.run.child.exitCode === null && r.run.child.signalCode === null;
}

export function holderPid(holder: string | null | undefined): number | undefined {
  const pid = Number(holder?.split(':')[1]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export interface LeaseRowSample {
  holder: string | null;
  epoch: number;
  expiresAtMs: number;
  dbNowMs: number;
}

/** A plain pg client on the test schema (application_name `chaos-monitor`, never terminated by the run). */
export async function stateClient(url: string, schema: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'chaos-monitor', options: `-c search_path=${schema}` });
  await client.connect();
  return client;
}

/**
 * Where an account's lease row is: with several accounts, the shared schema's `account_leases`
 * row named after the account (the client's search_path is the account's own schema).
 */
export interface LeaseRef {
  schema: string;
  account: string;
}

/** The account's lease row (the deployment's only one, or `ref`'s), with the database clock. */
export async function readLease(client: pg.Client, ref?: LeaseRef): Promise<LeaseRowSample | undefined> {
  const from = ref ? `"${ref.schema}".account_leases where account = $1` : 'account_leases';
  const { rows } = await client.query<{ holder: string | null; epoch: string; expires_at_ms: string; now_ms: string }>(
    `select holder, epoch::text, expires_at_ms::text, (extract(epoch from clock_timestamp()) * 1000)::bigint::text as now_ms
       from ${from} order by epoch desc limit 1`,
    ref ? [ref.account] : [],
  );
  const row = rows[0];
  return row ? { holder: row.holder, epoch: Number(row.epoch), expiresAtMs: Number(row.expires_at_ms), dbNowMs: Number(row.now_ms) } : undefined;
}

/** The live holder: a lease row whose expiry is ahead of the database clock. */
export function liveHolder(lease: LeaseRowSample | undefined): string | undefined {
  return lease && lease.holder && lease.expiresAtMs > lease.dbNowMs ? lease.holder : undefined;
}

/** Terminates every backend of `appName`; returns how many. */
export async function terminateConnections(client: pg.Client, appName: string): Promise<number> {
  const { rows } = await client.query<{ ok: boolean }>('select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()', [appName]);
  return rows.filter((r) => r.ok).length;
}

export interface Failover {
  action: 'SIGKILL' | 'SIGSTOP';
  victim: string;
  oldEpoch: number;
  newEpoch?: number;
  newHolder?: string;
  /** From the signal to the claim by another replica (epoch increase seen in account_leases). */
  claimMs?: number;
  /** From the signal to the first checkpoint committed after it (commit audit, database clock). */
  commitMs?: number;
  /** When no commit followed the claim: what the database connections were doing. */
  stall?: string;
  /**
   * When no commit followed the claim and the account is `reauth_required` (its bare pair lost,
   * paused by design until the operator's remedy): the mark's `since`.
   */
  pausedSince?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * After `victim` (holding `oldEpoch`) was signalled at `signalledAt` (database clock, ms): polls
 * every 50 ms until another holder has the lease under a greater epoch, then until a checkpoint
 * commit audited after the signal. Gives up after `timeoutMs` (fields stay undefined).
 */
export async function measureFailover(
  client: pg.Client,
  failover: Failover,
  victimPid: number,
  signalledAtMs: number,
  timeoutMs: number,
  ref?: LeaseRef,
): Promise<Failover> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until && failover.claimMs === undefined) {
    const lease = await readLease(client, ref);
    if (lease && lease.epoch > failover.oldEpoch && lease.holder && holderPid(lease.holder) !== victimPid) {
      failover.newEpoch = lease.epoch;
      failover.newHolder = lease.holder;
      failover.claimMs = lease.dbNowMs - signalledAtMs;
      break;
    }
    await sleep(50);
  }
  while (Date.now() < until && failover.claimMs !== undefined && failover.commitMs === undefined) {
    // Under the new tenure only: a commit of the old holder that was in flight when it was
    // signalled can land a few ms after the signal (seen: "commit 9 ms") and is not a failover's.
    const { rows } = await client.query<{ at_ms: string }>(
      `select (extract(epoch from min(at)) * 1000)::bigint::text as at_ms from chaos_commits where tbl = 'checkpoints' and at_ms_raw > $1 and epoch >= $2`,
      [signalledAtMs, failover.newEpoch ?? failover.oldEpoch + 1],
    );
    if (rows[0]?.at_ms) failover.commitMs = Number(rows[0].at_ms) - signalledAtMs;
    else await sleep(50);
  }
  if (failover.claimMs !== undefined && failover.commitMs === undefined && failover.newHolder) {
    // What the new holder's connections are doing when it does not commit (diagnosis).
    const pid = holderPid(failover.newHolder);
    const { rows } = await client.query<{ app: string; state: string; wait: string | null; query: string }>(
      `select application_name as app, state, coalesce(wait_event_type || ':' || wait_event, '') as wait, left(query, 60) as query from pg_stat_activity where application_name like 'chaos-r%' and state <> 'idle'`,
    );
    failover.stall = `new holder pid ${pid}; busy backends: ${rows.map((r) => `${r.app} ${r.state} ${r.wait} «${r.query.replace(/\s+/g, ' ')}»`).join('; ') || 'none'}`;
    // The account's own schema (the client's search path) holds its token marks.
    const mark = await client.query<{ since: string }>('select since from token_reauth limit 1').catch(() => ({ rows: [] as { since: string }[] }));
    if (mark.rows[0]) {
      failover.pausedSince = mark.rows[0].since;
      failover.stall += `; the account is reauth_required since ${failover.pausedSince} (paused by design until the operator's remedy)`;
    }
  }
  return failover;
}

/** The database clock now (ms), to time signals on the same clock as lease rows and the audit. */
export async function dbNowMs(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ now_ms: string }>('select (extract(epoch from clock_timestamp()) * 1000)::bigint::text as now_ms');
  return Number(rows[0]!.now_ms);
}

/** Live holders in the shared schema's `account_leases`: holder id → accounts it holds. */
export async function liveLeasesByHolder(client: pg.Client, schema: string): Promise<Map<string, string[]>> {
  const { rows } = await client.query<{ account: string; holder: string }>(
    `select account, holder from "${schema}".account_leases
      where holder is not null and expires_at_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint order by account`,
  );
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.holder, [...(out.get(r.holder) ?? []), r.account]);
  return out;
}
