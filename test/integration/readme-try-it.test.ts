import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli-process.js';
import { tempDir } from '../helpers/pull-harness.js';
import { availableTargets, createTarget, type SqlTarget } from '../helpers/sql-targets.js';

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md');
const SECTION = '### Try it against the simulator';

/** The fenced blocks of README's "Try it against the simulator" section, in order. */
function tryItBlocks(): { yaml: string; dotenv: string } {
  const text = fs.readFileSync(README, 'utf8');
  const start = text.indexOf(SECTION);
  if (start < 0) throw new Error(`README.md has no "${SECTION}" section (this test reads its config block)`);
  const end = text.indexOf('\n## ', start);
  const blocks = [...text.slice(start, end).matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }));
  const yaml = blocks.find((b) => b.lang === 'yaml');
  const dotenv = blocks.filter((b) => b.lang === 'sh').find((b) => /^[A-Z_]+=/m.test(b.body));
  if (!yaml || !dotenv) throw new Error(`README.md "${SECTION}": expected a yaml config block and a .env block`);
  return { yaml: yaml.body, dotenv: dotenv.body };
}

/** Writes the config and the `.env` where the README puts them (config/ and the working directory). */
function writeTryIt(dir: string, yaml: string, dotenv: string): void {
  fs.mkdirSync(path.join(dir, 'config'));
  fs.writeFileSync(path.join(dir, 'config/freight-sync.yaml'), yaml);
  fs.writeFileSync(path.join(dir, '.env'), dotenv);
}

async function cli(args: string[], cwd: string) {
  const run = runCli(args, { cwd });
  const exit = await run.exited;
  return { code: exit.code, stdout: run.stdout(), stderr: run.stderr() };
}

const targets = await availableTargets();

/**
 * The README's first steps as written (issue 13 acceptance: "from the README alone"), so the
 * README cannot drift from what the CLI accepts: its config block passes `validate-config`
 * unchanged, and — pointed at the test's simulator and PostgreSQL schema, the lines its comments
 * say to adapt — `check` passes.
 */
describe('README "Try it against the simulator"', () => {
  const { yaml, dotenv } = tryItBlocks();

  it('its config block, with its .env file, passes validate-config unchanged', async () => {
    const dir = tempDir('readme-try-it');
    writeTryIt(dir, yaml, dotenv);
    const result = await cli(['validate-config'], dir);
    expect(result.code, result.stderr).toBe(0);
    const effective = parse(result.stdout) as { connectors: Record<string, { options: Record<string, unknown> }> };
    expect(effective.connectors['erp_db']!.options['password']).toBe('[REDACTED]');
    // Nothing is created by validation: the state folder the block names does not exist.
    expect(fs.existsSync(path.join(dir, 'config/data'))).toBe(false);
  }, 60_000);

  describe.skipIf(!targets.postgres)('with the simulator and a PostgreSQL database', () => {
    let sim: SimulatorHandle;
    let pg: SqlTarget;
    beforeAll(async () => {
      // The simulator's own default credentials, which the README's config and .env use.
      sim = await startSimulator({ variant: 'main', loads: 30 });
      pg = await createTarget('postgres', targets.postgres, 'readme');
    });
    afterAll(async () => {
      await sim?.close();
      await pg?.drop();
    });

    it('check passes once the base URL and the connection point at them', async () => {
      const dir = tempDir('readme-try-it-check');
      const config = parse(yaml) as { api: { baseUrl: string }; connectors: { erp_db: { options: Record<string, unknown> } } };
      config.api.baseUrl = sim.baseUrl;
      const url = new URL(targets.postgres!);
      Object.assign(config.connectors.erp_db.options, {
        host: url.hostname,
        port: Number(url.port || 5432),
        user: decodeURIComponent(url.username),
        database: url.pathname.slice(1),
        schema: pg.options['schema'],
      });
      // The local server trusts loopback: any password works, including the .env placeholder.
      writeTryIt(dir, stringify(config), dotenv);
      const result = await cli(['check', '--json'], dir);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const checks = (JSON.parse(result.stdout) as { checks: Array<{ target: string; ok: boolean }> }).checks;
      expect(checks.map((c) => c.target)).toEqual(expect.arrayContaining(['token', 'loads', 'invoices', 'erp_db']));
      const tables = await pg.reader.introspection.getTables();
      expect(tables.map((t) => t.name)).toContain('loads');
    }, 60_000);
  });
});
