import { describe, expect, it } from 'vitest';
import { interpolateConfig } from '../../src/config/interpolate.js';
import { loadConfig } from '../../src/config/load-config.js';
import { configIssues, MINIMAL_YAML, tempDir } from '../helpers/config-fixtures.js';

describe('interpolateConfig', () => {
  it('replaces ${VAR} and ${VAR:-default} in string values at any depth', () => {
    const { value, issues } = interpolateConfig(
      { a: '${HOST}:${PORT:-8080}', list: ['x-${HOST}', 5, true, null], nested: { b: '${UNSET:-fallback}' } },
      { HOST: 'example.org' },
    );
    expect(issues).toEqual([]);
    expect(value).toEqual({ a: 'example.org:8080', list: ['x-example.org', 5, true, null], nested: { b: 'fallback' } });
  });

  it('uses the default when the variable is set but empty, as the shell does', () => {
    expect(interpolateConfig({ a: '${EMPTY:-d}' }, { EMPTY: '' }).value).toEqual({ a: 'd' });
    // Without a default an empty variable is an empty string, not an error.
    expect(interpolateConfig({ a: '${EMPTY}' }, { EMPTY: '' })).toEqual({ value: { a: '' }, issues: [] });
  });

  it('keeps $${ as a literal ${', () => {
    expect(interpolateConfig({ a: 'cost $${AMOUNT} and ${X}' }, { X: '1', AMOUNT: 'no' }).value).toEqual({
      a: 'cost ${AMOUNT} and 1',
    });
  });

  it('does not interpolate keys', () => {
    expect(interpolateConfig({ '${KEY}': 'v' }, { KEY: 'k' }).value).toEqual({ '${KEY}': 'v' });
  });

  it('reports a missing variable with the dotted path of the value', () => {
    const { issues } = interpolateConfig(
      { api: { auth: { clientSecret: '${FREIGHT_CLIENT_SECRET}' } }, list: ['${A}', '${B}'] },
      { A: 'a' },
    );
    expect(issues).toEqual([
      'api.auth.clientSecret: environment variable FREIGHT_CLIENT_SECRET is not set',
      'list[1]: environment variable B is not set',
    ]);
  });

  it('reports an unclosed or malformed reference', () => {
    expect(interpolateConfig({ a: 'x ${OPEN' }, {}).issues).toEqual(['a: unclosed "${" (write "$${" for a literal "${")']);
    expect(interpolateConfig({ a: '${not valid}' }, {}).issues).toEqual(['a: invalid environment variable reference "${not valid}"']);
  });
});

describe('interpolation in a config file', () => {
  it('ignores references in YAML comments and parses before substituting', async () => {
    const dir = tempDir({
      'c.yaml': `# \${NOT_SET_IN_COMMENT} must not be an error\n${MINIMAL_YAML}log:\n  level: \${LEVEL:-warn} # \${ALSO_IGNORED}\n`,
    });
    // A value containing YAML syntax stays one string: substitution happens after parsing.
    const { config } = await loadConfig({ configPath: `${dir}/c.yaml`, env: { FREIGHT_CLIENT_SECRET: 'a: b # c' } });
    expect(config.log.level).toBe('warn');
    expect(config.api.auth).toEqual({ clientId: 'client-1', clientSecret: 'a: b # c' });
  });

  it('names the value whose variable is missing, and still lists schema problems', async () => {
    const dir = tempDir({ 'c.yaml': `${MINIMAL_YAML}log:\n  level: loud\n` });
    const issues = await configIssues(() => loadConfig({ configPath: `${dir}/c.yaml`, env: {} }));
    expect(issues).toEqual([
      'api.auth.clientSecret: environment variable FREIGHT_CLIENT_SECRET is not set',
      'log.level: expected one of "trace", "debug", "info", "warn", "error", "fatal", "silent", got string "loud"',
    ]);
  });

  it('accepts numbers and booleans written as variables', async () => {
    const dir = tempDir({
      'c.yaml': `${MINIMAL_YAML}  # end of connectors\n`.replace(
        'api:\n',
        'api:\n  rateLimit: { requestsPerSecond: "${RPS}", maxInFlight: "${INFLIGHT:-2}", adaptive: "${ADAPTIVE}" }\n',
      ),
    });
    const { config } = await loadConfig({
      configPath: `${dir}/c.yaml`,
      env: { FREIGHT_CLIENT_SECRET: '12345678', RPS: '2.5', ADAPTIVE: 'false' },
    });
    expect(config.api.rateLimit).toEqual({ requestsPerSecond: 2.5, maxInFlight: 2, adaptive: false });
    // A numeric secret stays a string.
    expect(config.api.auth).toEqual({ clientId: 'client-1', clientSecret: '12345678' });
  });
});
