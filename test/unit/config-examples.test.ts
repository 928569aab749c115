import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateDeployment } from '../../src/app/validate-deployment.js';
import { loadConfig } from '../../src/config/load-config.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

// Only the variables the examples require without a default.
const env = {
  FREIGHT_CLIENT_ID: 'example-client',
  FREIGHT_CLIENT_SECRET: 'example-secret',
  FREIGHT_ACCESS_TOKEN: 'example-access-token',
  FREIGHT_REFRESH_TOKEN: 'example-refresh-token',
  FREIGHT_WEBHOOK_SECRET: 'example-webhook-secret',
};

describe('example configs', () => {
  it('config/freight-sync.example.yaml validates (main variant, client credentials)', async () => {
    const loaded = await loadConfig({ cwd: repoRoot, configPath: 'config/freight-sync.example.yaml', env: { ...env } });
    const { config } = loaded;
    // The whole deployment (connector options, mappings, capabilities), as every command checks it.
    await validateDeployment(loaded);
    expect(config.api.variant).toBe('main');
    expect(config.api.auth).toEqual({ clientId: 'example-client', clientSecret: 'example-secret' });
    expect(Object.keys(config.sync.streams).length).toBeGreaterThan(3);
  });

  it('config/freight-sync.brokerage.example.yaml validates (brokerage variant, pre-issued tokens)', async () => {
    const loaded = await loadConfig({
      cwd: repoRoot,
      configPath: 'config/freight-sync.brokerage.example.yaml',
      env: { ...env },
    });
    const { config } = loaded;
    await validateDeployment(loaded);
    expect(config.api.variant).toBe('brokerage');
    expect(config.api.auth).toEqual({ accessToken: 'example-access-token', refreshToken: 'example-refresh-token' });
    expect(config.webhooks.enabled).toBe(true);
    // Main-only streams must not appear in the brokerage example.
    expect(config.sync.streams.bills).toBeUndefined();
  });
});
