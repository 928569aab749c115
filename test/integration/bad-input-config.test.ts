import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';

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
    // SQL fixtures need the SQL connector; without it they would pass for the wrong reason.
    const needs = base.startsWith('sql-') ? 'sql' : undefined;
    return { name, expected, available: !needs || fs.existsSync(path.join(repo, 'connectors', needs, 'index.ts')) };
  });

describe('bad configuration files: exit 2 with the precise error', () => {
  it('has a non-empty expectation for every fixture', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
    for (const f of fixtures) expect(f.expected.length, f.name).toBeGreaterThan(0);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))('%s', async (_name, fixture) => {
    if (!fixture.available) return;
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
});
