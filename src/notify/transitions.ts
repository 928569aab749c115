import { conditionKey, type Condition, type Observation } from './conditions.js';

/** What the notifier remembers of a condition it announced (a `notification_conditions` row). */
export interface AnnouncedCondition {
  key: string;
  kind: string;
  subject: string;
  summary: string;
  opened_at: string;
}

export interface Transitions {
  /** Open now and not announced before: announce. */
  opened: Condition[];
  /** Announced before and no longer open: say it recovered (once). */
  recovered: AnnouncedCondition[];
}

/**
 * The deduplication: compares what is open now with what was announced. A condition still open
 * is neither announced again nor recovered; a kind absent from `observations` (not evaluated this
 * time) keeps its announced conditions as they are.
 */
export function diffConditions(announced: readonly AnnouncedCondition[], observations: readonly Observation[]): Transitions {
  const known = new Set(announced.map((a) => a.key));
  const evaluated = new Set(observations.map((o) => o.kind as string));
  const openNow = new Set<string>();
  const opened: Condition[] = [];
  for (const observation of observations) {
    for (const condition of observation.open) {
      const key = conditionKey(condition.kind, condition.subject);
      openNow.add(key);
      if (!known.has(key)) opened.push(condition);
    }
  }
  const recovered = announced.filter((a) => evaluated.has(a.kind) && !openNow.has(a.key));
  return { opened, recovered };
}
