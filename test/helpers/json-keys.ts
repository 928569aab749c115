/**
 * The top-level keys of one JSON object text, in order and WITH repeats — what `JSON.parse` hides
 * (it keeps the last value). Throws when the text is not a JSON object.
 */
export function topLevelKeys(text: string): string[] {
  JSON.parse(text); // well-formed first, so the scan below can trust the structure
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) keys.push(JSON.parse(text.slice(i, end + 1)) as string);
      expectKey = false;
      i = end;
    } else if (c === '{' || c === '[') {
      depth += 1;
      expectKey = c === '{' && depth === 1;
    } else if (c === '}' || c === ']') depth -= 1;
    else if (c === ',' && depth === 1) expectKey = true;
  }
  if (!text.trimStart().startsWith('{')) throw new Error(`not a JSON object: ${text.slice(0, 80)}`);
  return keys;
}

/** The keys that occur more than once at the top level of a JSON log line. */
export function repeatedKeys(line: string): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const key of topLevelKeys(line)) (seen.has(key) ? repeated : seen).add(key);
  return [...repeated];
}
