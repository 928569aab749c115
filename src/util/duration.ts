/**
 * ISO 8601 durations (`PT5M`, `P1D`, `P1DT2H30M`, `PT0.5S`) as used in the config. Months and
 * years are rejected because their length depends on the calendar; weeks are accepted.
 */
const DURATION_PATTERN =
  /^P(?!$)(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?=\d)(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

export function parseIsoDuration(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text.trim().toUpperCase());
  if (!match) return undefined;
  const [, weeks, days, hours, minutes, seconds] = match;
  const n = (part: string | undefined) => (part ? Number(part) : 0);
  return Math.round(
    n(weeks) * 604_800_000 + n(days) * 86_400_000 + n(hours) * 3_600_000 + n(minutes) * 60_000 + n(seconds) * 1000,
  );
}

export function formatIsoDuration(ms: number): string {
  if (ms === 0) return 'PT0S';
  let rest = ms;
  const days = Math.floor(rest / 86_400_000);
  rest -= days * 86_400_000;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = rest / 1000;
  let text = 'P';
  if (days) text += `${days}D`;
  if (hours || minutes || seconds) {
    text += 'T';
    if (hours) text += `${hours}H`;
    if (minutes) text += `${minutes}M`;
    if (seconds) text += `${seconds}S`;
  }
  return text;
}
