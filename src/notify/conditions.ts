/**
 * The conditions the notifier watches. A condition is identified by its kind and subject (a
 * stream, an outbox id, a stream and sink…): while it stays open it is announced once, and once
 * it clears a single "recovered" message follows (src/notify/transitions.ts).
 */
export const CONDITION_KINDS = ['stream-failing', 'stream-lagging', 'auth-lost', 'dead-letter', 'rejected-records', 'reconcile-differences'] as const;
export type ConditionKind = (typeof CONDITION_KINDS)[number];

export interface Condition {
  kind: ConditionKind;
  /** What it is about: a stream name, an outbox id, `loads/erp_db`… */
  subject: string;
  /** One line for the operator, e.g. `stream loads failed 3 runs in a row: HTTP 500 …`. */
  summary: string;
}

export function conditionKey(kind: string, subject: string): string {
  return `${kind}:${subject}`;
}

/**
 * Everything open of one kind, as just evaluated: keys of that kind not listed have cleared. A
 * kind that could not be evaluated (the credentials were not used since the start, no reconcile
 * ran yet) is simply absent, so its stored state is left as it is.
 */
export interface Observation {
  kind: ConditionKind;
  open: Condition[];
}
