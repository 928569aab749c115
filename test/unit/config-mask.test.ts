import { afterEach, describe, expect, it } from 'vitest';
import { maskSecrets } from '../../src/config/mask-secrets.js';
import { parseConfig } from '../../src/config/parse-config.js';
import { displayConfigYaml } from '../../src/config/display-config.js';
import { forgetSecretsForTests, scrubSecrets, SECRET_MASK } from '../../src/util/secrets.js';
import { minimalRaw } from '../helpers/config-fixtures.js';

afterEach(() => forgetSecretsForTests());

describe('maskSecrets', () => {
  it('masks every value under a secret-looking key, at any depth, without touching the input', () => {
    const input = {
      api: { auth: { clientId: 'id-1', clientSecret: 's3cret-value' } },
      connectors: { sftp: { options: { host: 'h', password: 'pw-123456', keys: [{ privateKey: 'PEM...' }] } } },
      nested: { refreshToken: null, webhookSecret: { any: 'shape' } },
    };
    const masked = maskSecrets(input);
    expect(masked).toEqual({
      api: { auth: { clientId: 'id-1', clientSecret: SECRET_MASK } },
      connectors: { sftp: { options: { host: 'h', password: SECRET_MASK, keys: [{ privateKey: SECRET_MASK }] } } },
      nested: { refreshToken: null, webhookSecret: SECRET_MASK },
    });
    expect(input.api.auth.clientSecret).toBe('s3cret-value');
  });
});

describe('secrets at load time', () => {
  it('registers every secret value so log lines are scrubbed', () => {
    const raw = minimalRaw();
    raw.api.auth = { accessToken: 'access-token-value', refreshToken: 'refresh-token-value' };
    raw.webhooks = { secret: 'webhook-shared-secret' };
    raw.connectors.erp_csv.options = { directory: './out', password: 'connector-password' };
    parseConfig(raw);
    const line = scrubSecrets('access-token-value refresh-token-value webhook-shared-secret connector-password ./out');
    expect(line).toBe(`${SECRET_MASK} ${SECRET_MASK} ${SECRET_MASK} ${SECRET_MASK} ./out`);
  });

  it('registers secrets even when the config is invalid', () => {
    const raw = minimalRaw();
    raw.api.auth.clientSecret = 'secret-of-a-bad-config';
    raw.api.variant = 'nope';
    expect(() => parseConfig(raw)).toThrow();
    expect(scrubSecrets('secret-of-a-bad-config')).toBe(SECRET_MASK);
  });

  it('prints the effective config with secrets masked and durations in ISO 8601', () => {
    const yaml = displayConfigYaml(parseConfig(minimalRaw()));
    expect(yaml).not.toContain('client-secret-1');
    expect(yaml).toContain(`clientSecret: "${SECRET_MASK}"`);
    expect(yaml).toContain('lookback: PT10M');
    expect(yaml).toContain('maxWindow: P7D');
    expect(yaml).toContain('baseDelay: PT0.5S');
  });
});
