import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../src/cli/main.js';
import { MINIMAL_YAML, tempDir } from '../helpers/config-fixtures.js';

/** Runs the CLI in-process and captures what it writes. */
async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await main(['node', 'freight-sync', ...args]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

afterEach(() => {
  delete process.env['FREIGHT_CLIENT_SECRET'];
  process.exitCode = undefined;
});

describe('freight-sync validate-config', () => {
  it('prints the effective config as YAML with secrets masked and exits 0', async () => {
    const dir = tempDir({ 'c.yaml': MINIMAL_YAML });
    process.env['FREIGHT_CLIENT_SECRET'] = 'cli-secret-value';
    const { code, stdout, stderr } = await run(['-c', path.join(dir, 'c.yaml'), 'validate-config']);
    expect(code).toBe(0);
    expect(stderr).toContain('config OK');
    expect(stdout).not.toContain('cli-secret-value');
    const printed = parse(stdout);
    expect(printed.api.auth.clientSecret).toBe('[REDACTED]');
    expect(printed.sync.streams.loads.lookback).toBe('PT10M');
    expect(printed.state.path).toBe(path.join(dir, 'data/freight-sync.sqlite'));
  });

  it('prints every issue and exits 2 on an invalid config', async () => {
    const dir = tempDir({ 'c.yaml': MINIMAL_YAML.replace('variant: main', 'variant: mian') });
    const { code, stdout, stderr } = await run(['--config', path.join(dir, 'c.yaml'), 'validate-config']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('api.auth.clientSecret: environment variable FREIGHT_CLIENT_SECRET is not set');
    expect(stderr).toContain('api.variant: expected one of "main", "brokerage", got string "mian"');
  });
});
