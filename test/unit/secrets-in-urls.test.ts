import { afterEach, describe, expect, it } from 'vitest';
import { maskSecrets } from '../../src/config/mask-secrets.js';
import { displayConfigYaml } from '../../src/config/display-config.js';
import { parseConfig } from '../../src/config/parse-config.js';
import { forgetSecretsForTests, maskUrlSecrets, scrubSecrets, SECRET_MASK } from '../../src/util/secrets.js';
import { minimalRaw } from '../helpers/config-fixtures.js';
import { capturingLogger } from '../helpers/log-capture.js';

afterEach(() => forgetSecretsForTests());

describe('maskUrlSecrets', () => {
  it('masks the password of user:password@host, up to the last @ of the authority', () => {
    expect(maskUrlSecrets('postgres://app:s3cr3t@db.internal:5432/erp')).toBe(`postgres://app:${SECRET_MASK}@db.internal:5432/erp`);
    expect(maskUrlSecrets('mysql://root:p@ss:w0rd@10.0.0.1/erp?ssl=true')).toBe(`mysql://root:${SECRET_MASK}@10.0.0.1/erp?ssl=true`);
    expect(maskUrlSecrets('connect ECONNREFUSED (url "sftp://u:pw%40x@h/in")')).toBe(`connect ECONNREFUSED (url "sftp://u:${SECRET_MASK}@h/in")`);
  });

  it('masks password, token, secret and key parameters in queries and connection strings', () => {
    expect(maskUrlSecrets('https://h/hook?user=a&password=hunter2&x=1')).toBe(`https://h/hook?user=a&password=${SECRET_MASK}&x=1`);
    expect(maskUrlSecrets('https://h/?access_token=abc.def&api_key=k1#frag')).toBe(`https://h/?access_token=${SECRET_MASK}&api_key=${SECRET_MASK}#frag`);
    expect(maskUrlSecrets('Server=db;User Id=sa;Password=Str0ng!;Database=erp')).toBe(`Server=db;User Id=sa;Password=${SECRET_MASK};Database=erp`);
    expect(maskUrlSecrets('{"url":"https://h/x?secret=zzz"}')).toBe(`{"url":"https://h/x?secret=${SECRET_MASK}"}`);
  });

  it('leaves URLs without credentials alone', () => {
    for (const text of ['https://api.example.com/v1/loads?limit=50&skip=0', 'postgres://postgres@127.0.0.1:5432/test', 'https://h:8443/a@b', 'user@example.com', 'token= ']) {
      expect(maskUrlSecrets(text)).toBe(text);
    }
  });
});

describe('secrets inside URLs', () => {
  const withSqlUrl = () => {
    const raw = minimalRaw();
    raw.connectors.erp_sql = { type: 'sql', options: { dialect: 'postgres', url: 'postgres://erp:Db-Passw0rd@db.example/erp' } };
    return raw;
  };

  it('masks them in maskSecrets and the validate-config display, whatever the key', () => {
    expect(maskSecrets({ options: { url: 'postgres://erp:Db-Passw0rd@db/erp', note: 'https://x/?token=t0k3n-value' } })).toEqual({
      options: { url: `postgres://erp:${SECRET_MASK}@db/erp`, note: `https://x/?token=${SECRET_MASK}` },
    });
    const yaml = displayConfigYaml(parseConfig(withSqlUrl()));
    expect(yaml).not.toContain('Db-Passw0rd');
    expect(yaml).toContain(`postgres://erp:${SECRET_MASK}@db.example/erp`);
  });

  it('registers the password of a config URL, so a message quoting it alone is masked', () => {
    parseConfig(withSqlUrl());
    expect(scrubSecrets('password authentication failed (Db-Passw0rd)')).toBe(`password authentication failed (${SECRET_MASK})`);
  });

  it('masks them in log lines, registered or not', () => {
    const { logger, text } = capturingLogger('info');
    logger.info({ target: 'mysql://root:N0tRegistered@db/erp' }, 'connecting to https://h/?password=also-not-registered');
    expect(text()).not.toContain('N0tRegistered');
    expect(text()).not.toContain('also-not-registered');
    expect(text()).toContain(`mysql://root:${SECRET_MASK}@db/erp`);
  });
});
