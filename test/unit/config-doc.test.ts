import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { STREAM_NAMES } from '../../src/config/types.js';
import { schemaKeyPaths } from '../helpers/schema-paths.js';

const DOC = 'docs/configuration.md';

/** Key paths in the first column of the reference table. */
function documentedPaths(markdown: string): string[] {
  return [...markdown.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!).sort();
}

describe(`${DOC} matches the config schema`, () => {
  const doc = fs.readFileSync(DOC, 'utf8');
  const schema = schemaKeyPaths(configSchema, STREAM_NAMES);
  const documented = documentedPaths(doc);

  it('finds a sensible number of keys on both sides (the walker and the parser work)', () => {
    expect(schema.length).toBeGreaterThan(60);
    expect(schema).toContain('webhooks.secret');
    expect(schema).toContain('sync.streams.<stream>.sinks');
  });

  it('documents every key of the schema', () => {
    expect(schema.filter((p) => !documented.includes(p))).toEqual([]);
  });

  it('documents no key the schema does not have', () => {
    // `accounts` is read before the schema (src/config/accounts.ts): each account is then one schema-valid config.
    const outsideSchema = ['accounts'];
    expect(documented.filter((p) => !schema.includes(p) && !outsideSchema.includes(p))).toEqual([]);
  });

  it('lists every stream name', () => {
    const section = doc.slice(doc.indexOf('## Stream names'));
    expect(STREAM_NAMES.filter((name) => !section.includes(`\`${name}\``))).toEqual([]);
  });
});
