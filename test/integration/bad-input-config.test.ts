import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { requireService } from '../helpers/services.js';

/**
 * The bad-configuration corpus (test/fixtures/bad-input/config): every file makes the real CLI
 * exit 2 with its exact expected line(s), without a stack trace, without touching the API (its
 * URL is a closed port: getting that far would be exit 1), and without printing the secret.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const corpus = path.resolve(here, '../fixtures/bad-input/config');
const repo = path.resolve(here, '../..');
const SECRET = 'bad-input-secret-9f8e7d6c5b4a';

const fixtures = fs
  .readdirSync(corpus)
  .filter((name) => name.endsWith('.yaml'))
  .sort()
  .map((name) => {
    const base = name.slice(0, -'.yaml'.length);
    const expected = fs.readFileSync(path.join(corpus, `${base}.expected.txt`), 'utf8').split('\n').filter((l) => l.trim() !== '');
    const needs = base.startsWith('sql-') ? 'sql' : undefined;
    return { name, expected, needs };
  });

// SQL fixtures need the SQL connector; without it they would pass for the wrong reason. A missing
// connector is a visible skip with a loud warning here, and a failure under CI=true.
const sqlConnector = fixtures.some((f) => f.needs === 'sql')
  ? requireService('the SQL connector (connectors/sql/index.ts)', {
      ok: fs.existsSync(path.join(repo, 'connectors', 'sql', 'index.ts')),
      reason: `${path.join(repo, 'connectors', 'sql', 'index.ts')} does not exist`,
    })
  : true;
const available = (fixture: (typeof fixtures)[number]) => fixture.needs !== 'sql' || sqlConnector;

describe('bad configuration files: exit 2 with the precise error', () => {
  it('has a non-empty expectation for every fixture', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
    for (const f of fixtures) expect(f.expected.length, f.name).toBeGreaterThan(0);
  });

  for (const fixture of fixtures) {
    const title = available(fixture) ? fixture.name : `${fixture.name} — SKIPPED: needs the ${fixture.needs} connector, which is missing`;
    it.skipIf(!available(fixture))(title, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-bad-config-'));
      fs.copyFileSync(path.join(corpus, fixture.name), path.join(dir, fixture.name));
      const run = runCli(['sync', '-c', path.join(dir, fixture.name)], { cwd: dir, env: { BAD_INPUT_CLIENT_SECRET: SECRET } });
      const exit = await run.exited;
      const stderr = run.stderr();
      expect(exit.code, stderr).toBe(2);
      for (const line of fixture.expected) expect(stderr).toContain(line);
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(`${run.stdout()}${stderr}`).not.toContain(SECRET);
      // Nothing was delivered anywhere.
      expect(fs.existsSync(path.join(dir, 'drop'))).toBe(false);
      fs.rmSync(dir, { recursive: true, force: true });
    }, 60_000);
  }
});
