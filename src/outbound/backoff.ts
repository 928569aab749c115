/** Exponential backoff with jitter (half fixed, half random), stored on the row as next_attempt_at. */
export function backoffDelay(attempts: number, base: number, max: number, random: () => number = Math.random): number {
  const exponential = Math.min(max, base * 2 ** Math.max(0, attempts - 1));
  return Math.round(exponential * (0.5 + random() * 0.5));
}
