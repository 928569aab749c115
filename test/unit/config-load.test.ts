import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, resolveConfigPath } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/util/errors.js';
import { configIssues, MINIMAL_YAML, tempDir } from '../helpers/config-fixtures.js';

const SECRET_ENV = { FREIGHT_CLIENT_SECRET: 'client-secret-1' };

describe('config file location', () => {
  it('prefers -c, then FREIGHT_SYNC_CONFIG, then config/freight-sync.yaml under cwd', () => {
    const cwd = '/srv/app';
    expect(resolveConfigPath({ cwd, configPath: 'a.yaml', env: { FREIGHT_SYNC_CONFIG: 'b.yaml' } })).toBe('/srv/app/a.yaml');
    expect(resolveConfigPath({ cwd, env: { FREIGHT_SYNC_CONFIG: '/etc/b.yaml' } })).toBe('/etc/b.yaml');
    expect(resolveConfigPath({ cwd, env: {} })).toBe('/srv/app/config/freight-sync.yaml');
  });

  it('loads config/freight-sync.yaml from cwd by default', async () => {
    const dir = tempDir({ 'config/freight-sync.yaml': MINIMAL_YAML });
    const loaded = await loadConfig({ cwd: dir, env: { ...SECRET_ENV } });
    expect(loaded.filePath).toBe(path.join(dir, 'config/freight-sync.yaml'));
    expect(loaded.baseDir).toBe(path.join(dir, 'config'));
  });

  it('names the missing file', async () => {
    const dir = tempDir();
    const error = await loadConfig({ cwd: dir, configPath: 'nope.yaml', env: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(path.join(dir, 'nope.yaml'));
  });
});

describe('.env files', () => {
  it('reads .env from cwd without overriding real variables', async () => {
    const dir = tempDir({
      'c.yaml': `${MINIMAL_YAML}log:\n  level: \${LEVEL}\n`,
      '.env': 'FREIGHT_CLIENT_SECRET=from-dotenv-1\nLEVEL=debug\n',
    });
    const env: Record<string, string | undefined> = { LEVEL: 'error' };
    const { config } = await loadConfig({ cwd: dir, configPath: 'c.yaml', env });
    expect(config.api.auth).toMatchObject({ clientSecret: 'from-dotenv-1' });
    expect(config.log.level).toBe('error');
    expect(env['FREIGHT_CLIENT_SECRET']).toBe('from-dotenv-1');
  });

  it('reads the .env beside the config file too', async () => {
    const cwd = tempDir();
    const configDir = tempDir({ 'c.yaml': MINIMAL_YAML, '.env': 'FREIGHT_CLIENT_SECRET=beside-config-1\n' });
    const { config } = await loadConfig({ cwd, configPath: path.join(configDir, 'c.yaml'), env: {} });
    expect(config.api.auth).toMatchObject({ clientSecret: 'beside-config-1' });
  });
});

describe('YAML syntax errors', () => {
  it('name the file, line and column', async () => {
    const dir = tempDir({ 'c.yaml': 'api:\n  variant: main\n  baseUrl: [unclosed\nlog: {}\n' });
    const issues = await configIssues(() => loadConfig({ cwd: dir, configPath: 'c.yaml', env: {} }));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(new RegExp(`^${path.join(dir, 'c.yaml').replace(/[.]/g, '\\.')}:\\d+:\\d+: YAML syntax error: `));
  });

  it('report duplicate keys', async () => {
    const dir = tempDir({ 'c.yaml': 'log:\n  level: info\n  level: debug\n' });
    const issues = await configIssues(() => loadConfig({ cwd: dir, configPath: 'c.yaml', env: {} }));
    expect(issues[0]).toContain(`${path.join(dir, 'c.yaml')}:3:3: YAML syntax error`);
  });
});

describe('paths', () => {
  it('resolves state.path and module paths against the config file folder', async () => {
    const cwd = tempDir();
    const configDir = tempDir({
      'c.yaml': MINIMAL_YAML.replace(
        'connectors:\n',
        'connectors:\n  custom:\n    module: ./plugins/mine.js\n  pkg:\n    module: some-package\n',
      ),
    });
    const { config } = await loadConfig({ cwd, configPath: path.join(configDir, 'c.yaml'), env: { ...SECRET_ENV } });
    expect(config.state.path).toBe(path.join(configDir, 'data/freight-sync.sqlite'));
    expect(config.connectors['custom']?.module).toBe(path.join(configDir, 'plugins/mine.js'));
    expect(config.connectors['pkg']?.module).toBe('some-package');
  });
});
