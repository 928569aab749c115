import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runCli } from '../helpers/cli-process.js';

/**
 * The CLI as a user runs it (real processes, real exit codes): `validate-config` and every
 * command that opens the app refuse the same files, with exit 2, naming the file and the config
 * path, before any folder, file or database exists.
 */

/** Everything this deployment would create, relative to the config file's folder. */
const CREATED = ['state', 'state/freight-sync.sqlite', 'erp', 'erp/erp.sqlite', 'out', 'inbox'];

function deployment(): Record<string, any> {
  return {
    // Nothing listens on port 9: a command that got past validation would fail with exit 1, not 2.
    api: { variant: 'main', baseUrl: 'http://127.0.0.1:9/v1', auth: { clientId: 'c', clientSecret: 'not-a-real-secret' }, retry: { maxAttempts: 1 } },
    state: { path: './state/freight-sync.sqlite' },
    log: { level: 'silent' },
    sync: { streams: { loads: { sinks: ['erp', 'drop'] } } },
    connectors: {
      erp: { type: 'sql', options: { dialect: 'sqlite', filename: './erp/erp.sqlite' } },
      drop: { type: 'csv', options: { directory: './out' } },
      inbox: { type: 'inbox', options: { dir: './inbox' } },
    },
    outbound: { enabled: true, sources: ['inbox'], pollInterval: 'PT5S' },
    http: { enabled: false },
  };
}

function writeConfig(raw: Record<string, any>): { dir: string; file: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-cli-validate-'));
  const file = path.join(dir, 'freight-sync.yaml');
  fs.writeFileSync(file, stringify(raw));
  return { dir, file };
}

async function cli(args: string[], cwd: string) {
  const run = runCli(args, { cwd });
  const exit = await run.exited;
  return { code: exit.code, stdout: run.stdout(), stderr: run.stderr() };
}

function created(dir: string): string[] {
  return CREATED.filter((entry) => fs.existsSync(path.join(dir, entry)));
}

const BROKEN: Array<[string, (raw: any) => void, string]> = [
  ['sql dialect: postgresql', (r) => (r.connectors.erp.options = { dialect: 'postgresql', host: 'db' }), 'connectors.erp.options.dialect: expected one of "sqlite", "postgres", "mysql", "mssql", got string "postgresql"'],
  ['sql deleteMode: sof', (r) => (r.connectors.erp.options.deleteMode = 'sof'), 'connectors.erp.options.deleteMode: expected one of "soft", "hard", got string "sof"'],
  ['inbox dirr:', (r) => (r.connectors.inbox.options.dirr = './elsewhere'), 'connectors.inbox.options.dirr: unknown key (did you mean "dir"?)'],
  ['loads option includeChargeSet', (r) => (r.sync.streams.loads.options = { includeChargeSet: true }), 'sync.streams.loads.options.includeChargeSet: unknown key (did you mean "includeChargeSets"?)'],
];

describe('validate-config and the commands that open the app refuse the same configs', () => {
  it.each(BROKEN)('validate-config refuses %s with exit 2, naming file and path, creating nothing', async (_what, breakIt, expected) => {
    const raw = deployment();
    breakIt(raw);
    const { dir, file } = writeConfig(raw);
    const result = await cli(['-c', file, 'validate-config'], dir);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`invalid configuration in ${file}:`);
    expect(result.stderr).toContain(expected);
    expect(created(dir)).toEqual([]);
  });

  it('run, sync, backfill, push and status refuse them the same way, before touching anything', async () => {
    const raw = deployment();
    for (const [, breakIt] of BROKEN) breakIt(raw);
    const { dir, file } = writeConfig(raw);
    const commands = [['run'], ['sync'], ['backfill', '--from', '2025-01-01', '--to', '2025-01-02'], ['push'], ['status', '--offline'], ['validate-config']];
    for (const command of commands) {
      const result = await cli(['-c', file, ...command], dir);
      expect(result.code, `${command[0]}: ${result.stderr}`).toBe(2);
      expect(result.stderr, command[0]).toContain(`invalid configuration in ${file}:`);
      for (const [, , expected] of BROKEN) expect(result.stderr, command[0]).toContain(expected);
      expect(created(dir), command[0]).toEqual([]);
    }
  });

  it('the effective config validate-config prints loads again and prints the same', async () => {
    const { dir, file } = writeConfig(deployment());
    const first = await cli(['-c', file, 'validate-config'], dir);
    expect(first.code, first.stderr).toBe(0);
    expect(parse(first.stdout).outbound.pollInterval).toBe('PT5S');
    expect(created(dir)).toEqual([]);

    const again = path.join(dir, 'effective.yaml');
    fs.writeFileSync(again, first.stdout);
    const second = await cli(['-c', again, 'validate-config'], dir);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
  });

  it('sync --stream accepts a connector mapping of a stream it does not run this time', async () => {
    const raw = deployment();
    raw.sync.streams.customers = { sinks: ['drop'] };
    raw.connectors.drop.mappings = { loads: { file: 'mappings/loads.yaml' } };
    const { dir, file } = writeConfig(raw);
    fs.mkdirSync(path.join(dir, 'mappings'));
    fs.copyFileSync(path.resolve(import.meta.dirname, '../../config/mappings/loads.yaml'), path.join(dir, 'mappings/loads.yaml'));
    const result = await cli(['-c', file, 'sync', '--stream', 'customers'], dir);
    // Past validation and connector start-up: it fails on the unreachable API (exit 1), not on the config.
    expect(result.stderr).not.toContain('invalid configuration');
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(/customers\s+failed/);
  });
});
