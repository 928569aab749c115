import type { Condition, Observation } from './conditions.js';

/** The state the notifier reads: the same stores the CLI (`status`, `outbox`, `rejected`) reads. */
export interface ConditionSources {
  /** Streams that run on a schedule (push-only streams have no runs). */
  streams: readonly string[];
  runs: {
    lastVerdicts(stream: string, limit: number): Promise<Array<{ status: string; error: string | null }>>;
    /** When each stream last finished a run without error (backfills do not count: they re-read the past). */
    lastSuccesses(): Promise<Array<{ stream: string; finishedAt: string }>>;
  };
  outbox: { deadLetters(): Promise<Array<{ id: number; kind: string; erp_key: string; last_error: string | null }>> };
  quarantine: { counts(): Promise<Array<{ stream: string; kind: string; count: number }>> };
  /** What the API client last learned about the credentials (or the shared state's reauth_required mark). */
  auth(): AuthObservation | Promise<AuthObservation>;
  /** Differences per stream and sink of the last reconcile `run` made; undefined before the first. */
  reconcile(): ReadonlyArray<{ stream: string; sink: string; differences: number; sample: readonly string[] }> | undefined;
}

export type AuthObservation = { state: 'unknown' } | { state: 'ok' } | { state: 'lost'; message: string };

export interface EvaluationSettings {
  /** Failed runs in a row that make a stream "failing". */
  streamFailures: number;
  /** Milliseconds without a successful run that make a stream "lagging"; absent: not checked. */
  lagThresholdMs?: number | undefined;
  now: Date;
}

/** Evaluates every condition kind it can; see `Observation` for what an absent kind means. */
export async function evaluateConditions(sources: ConditionSources, settings: EvaluationSettings): Promise<Observation[]> {
  const observations: Observation[] = [
    { kind: 'stream-failing', open: await failingStreams(sources, settings.streamFailures) },
    { kind: 'stream-lagging', open: settings.lagThresholdMs === undefined ? [] : await laggingStreams(sources, settings.lagThresholdMs, settings.now) },
    { kind: 'dead-letter', open: await deadLetters(sources) },
    { kind: 'rejected-records', open: await rejectedRecords(sources) },
  ];
  const auth = await sources.auth();
  if (auth.state !== 'unknown') {
    observations.push({
      kind: 'auth-lost',
      open: auth.state === 'lost' ? [{ kind: 'auth-lost', subject: 'api', summary: `authentication lost: ${oneLine(auth.message)}` }] : [],
    });
  }
  const reconcile = sources.reconcile();
  if (reconcile) {
    observations.push({
      kind: 'reconcile-differences',
      open: reconcile
        .filter((r) => r.differences > 0)
        .map((r) => ({
          kind: 'reconcile-differences' as const,
          subject: `${r.stream}/${r.sink}`,
          summary: `reconcile found ${r.differences} difference(s) between the API and sink ${r.sink} for ${r.stream}${r.sample.length > 0 ? `, e.g. ${r.sample.map(oneLine).join('; ')}` : ''}`,
        })),
    });
  }
  return observations;
}

async function failingStreams(sources: ConditionSources, threshold: number): Promise<Condition[]> {
  const open: Condition[] = [];
  for (const stream of sources.streams) {
    const runs = await sources.runs.lastVerdicts(stream, threshold);
    if (runs.length < threshold || runs.some((r) => r.status !== 'failed')) continue;
    const error = runs[0]?.error;
    open.push({
      kind: 'stream-failing',
      subject: stream,
      summary: `stream ${stream} failed ${threshold} run(s) in a row${error ? `: ${oneLine(error)}` : ''}`,
    });
  }
  return open;
}

async function laggingStreams(sources: ConditionSources, thresholdMs: number, now: Date): Promise<Condition[]> {
  const open: Condition[] = [];
  const lastSuccess = new Map((await sources.runs.lastSuccesses()).map((s) => [s.stream, s.finishedAt]));
  for (const stream of sources.streams) {
    const last = lastSuccess.get(stream);
    // A stream that never succeeded is not "lagging": `stream-failing` speaks for it.
    if (last === undefined) continue;
    const lagMs = now.getTime() - Date.parse(last);
    if (lagMs <= thresholdMs) continue;
    open.push({
      kind: 'stream-lagging',
      subject: stream,
      summary: `stream ${stream} has had no successful run since ${last} (${Math.round(lagMs / 60_000)} min ago)`,
    });
  }
  return open;
}

async function deadLetters(sources: ConditionSources): Promise<Condition[]> {
  return (await sources.outbox.deadLetters()).map((row) => ({
    kind: 'dead-letter' as const,
    subject: String(row.id),
    summary: `outbound command #${row.id} (${row.kind} ${row.erp_key}) is a dead letter${row.last_error ? `: ${oneLine(row.last_error)}` : ''}`,
  }));
}

async function rejectedRecords(sources: ConditionSources): Promise<Condition[]> {
  return (await sources.quarantine.counts())
    .filter((c) => c.count > 0)
    .map((c) => ({
      kind: 'rejected-records' as const,
      subject: `${c.stream}/${c.kind}`,
      summary:
        c.kind === 'webhook'
          ? `${c.count} webhook event(s) for ${c.stream} failed and are parked`
          : `${c.count} ${c.stream} record(s) rejected (${c.kind === 'sink' ? 'refused by a sink' : 'failed the API schema'})`,
    }));
}

/** Errors can span lines (stack-like messages); a notification line must not. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 297)}...` : flat;
}
