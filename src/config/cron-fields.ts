/**
 * Range checks node-cron's `validate` leaves out. It accepts `*\/61 * * * *` (a step longer than
 * the field, which silently means "at minute 0 only") and reversed ranges such as `5-1`; either
 * way a stream would sync far less often than the operator believes, or never, with no error.
 * Returns a problem in words, or undefined when every field is plausible.
 */
const FIELDS5 = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
] as const;
const SECONDS = { name: 'second', min: 0, max: 59 } as const;

export function cronFieldProblem(expression: string): string | undefined {
  const parts = expression.trim().split(/\s+/);
  const fields = parts.length === 6 ? [SECONDS, ...FIELDS5] : FIELDS5;
  for (const [i, text] of parts.entries()) {
    const field = fields[i];
    if (!field) return undefined;
    for (const item of text.split(',')) {
      const [range = '', stepText] = item.split('/');
      if (stepText !== undefined) {
        const step = Number(stepText);
        const span = field.max - field.min + 1;
        if (Number.isInteger(step) && step > span) return `${field.name}: step ${step} is longer than the field's range ${field.min}-${field.max}`;
      }
      const bounds = /^(\d+)-(\d+)$/.exec(range);
      if (bounds && Number(bounds[1]) > Number(bounds[2])) return `${field.name}: range ${range} runs backwards`;
    }
  }
  return undefined;
}
