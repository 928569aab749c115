/** Request counters exposed through `stats()` and `GET /__admin/stats`. */
export interface SimulatorStats {
  requests: number;
  byRoute: Record<string, Record<string, number>>;
  rateLimited: number;
  faults: Record<string, number>;
  ambiguousCreates: number;
  /** Mutator load edits stamped late (option `mutator.lateWrites`). */
  lateWrites: number;
  /** Invoices made by `POST /invoices` (one per load invoiced). */
  invoicesCreated: number;
  tokensIssued: number;
  /** Requests that presented a refresh token already rotated away or revoked (spec §5.6). */
  retiredRefreshTokenUses: number;
  /**
   * Of those, the ones whose rotation's answer was lost: the pair that replaced the token was
   * never presented by anyone (its receiver died before storing it), so nobody could know better.
   */
  retiredRefreshTokenUsesAfterLostAnswer: number;
  /** Rotations done whose answer the simulator cut short (a `truncated` fault): their new pair never reached the client. */
  rotationAnswersCut: number;
  /** Of those, the ones whose rotation answer the simulator itself cut short (a `truncated` fault). */
  retiredRefreshTokenUsesAfterCutAnswer: number;
  /** When each lost answer not cut by the simulator was given (local ms, Date.now()): to match them with crashes. */
  lostRotationAnswersAtMs: number[];
  webhooksSent: number;
  /** Failed delivery attempts (each non-200 answer or connection error). */
  webhooksFailed: number;
  /** Events the sender gave up on after its last retry: they exist only in the event log. */
  webhooksGivenUp: number;
  /** Requests to the document storage origin (documents.ts), and those that carried an Authorization header. */
  documentDownloads: number;
  documentDownloadsWithAuthorization: number;
}

export function emptyStats(): SimulatorStats {
  return { requests: 0, byRoute: {}, rateLimited: 0, faults: {}, ambiguousCreates: 0, lateWrites: 0, invoicesCreated: 0, tokensIssued: 0, retiredRefreshTokenUses: 0, retiredRefreshTokenUsesAfterLostAnswer: 0, retiredRefreshTokenUsesAfterCutAnswer: 0, rotationAnswersCut: 0, lostRotationAnswersAtMs: [], webhooksSent: 0, webhooksFailed: 0, webhooksGivenUp: 0, documentDownloads: 0, documentDownloadsWithAuthorization: 0 };
}

export function countRoute(stats: SimulatorStats, route: string, status: number | string): void {
  const byStatus = (stats.byRoute[route] ??= {});
  const key = String(status);
  byStatus[key] = (byStatus[key] ?? 0) + 1;
}

export function cloneStats(stats: SimulatorStats): SimulatorStats {
  return structuredClone(stats);
}
