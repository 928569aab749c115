import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../src/util/errors.js';

/** A fresh temp folder per test, holding the files given (path → content). */
export function tempDir(files: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-config-'));
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/** A minimal valid config as YAML, with `extra` appended (top-level sections). */
export const MINIMAL_YAML = `
api:
  variant: main
  baseUrl: https://api.example.com/v1
  auth:
    clientId: client-1
    clientSecret: \${FREIGHT_CLIENT_SECRET}
sync:
  streams:
    loads:
      sinks: [erp_csv]
connectors:
  erp_csv:
    type: csv
    options: { directory: ./out }
`;

/** A minimal valid config object (what parsed YAML looks like). */
export function minimalRaw(): Record<string, any> {
  return {
    api: {
      variant: 'main',
      baseUrl: 'https://api.example.com/v1',
      auth: { clientId: 'client-1', clientSecret: 'client-secret-1' },
    },
    sync: { streams: { loads: { sinks: ['erp_csv'] } } },
    connectors: { erp_csv: { type: 'csv', options: { directory: './out' } } },
  };
}

/** The issues of the ConfigError `fn` throws; fails the test when it does not throw one. */
export async function configIssues(fn: () => unknown): Promise<readonly string[]> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError, but the config was accepted');
}
