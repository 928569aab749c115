import type { z } from 'zod';
import { closestKey } from '../../config/closest-key.js';

/** `shipperDetails[0].city` from a zod path. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number' || (typeof part === 'string' && /^\d+$/.test(part))) out += `[${String(part)}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/**
 * One line naming every problem of a row: `type_of_load: "IMPRT" is not one of …; caller: is
 * required`. Unknown fields name the closest known one, because a typo in a CSV header is the
 * usual cause.
 */
export function formatCommandIssues(error: z.ZodError, kind: string, known: readonly string[], limit = 6): string {
  const parts: string[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const hint = closestKey(key, known);
        const where = fieldPath([...issue.path, key]);
        parts.push(`${where}: unknown field for kind ${kind}${hint ? ` (did you mean ${hint}?)` : ''}`);
      }
      continue;
    }
    const where = fieldPath(issue.path);
    parts.push(where ? `${where}: ${issue.message}` : issue.message);
  }
  const shown = parts.slice(0, limit);
  if (parts.length > limit) shown.push(`and ${parts.length - limit} more problem(s)`);
  return shown.join('; ');
}
