import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, loadDeployment } from '../../src/config/load-config.js';
import { ConfigError, UsageError } from '../../src/util/errors.js';

/** Issue 11, item 2: several API accounts in one config file (inline list, or a folder of files). */

function tempConfig(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-accounts-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return path.join(dir, 'freight-sync.yaml');
}

const account = (name: string, clientId: string, extra = '', options: { api?: string; variant?: string | null } = {}) => `
  - name: ${name}
    api:${options.variant === null ? '' : `
      variant: ${options.variant ?? 'main'}`}
      baseUrl: ${options.api ?? 'https://api.example.test'}
      auth: { clientId: ${clientId}, clientSecret: s-${clientId} }
    sync:
      streams:
        loads: { enabled: true, sinks: [out] }
    connectors:
      out: { type: csv, options: { directory: ./out/${name} } }${extra}`;

/** The same account as a file of its own (accounts.dir): no name, no list indent. */
const accountFile = (clientId: string, options: { variant?: string | null; out?: string } = {}) =>
  account('x', clientId, '', options).replace('  - name: x\n', '').replace(/^ {4}/gm, '').replace('./out/x', `./out/${options.out ?? clientId}`);

async function problems(configPath: string): Promise<string[]> {
  try {
    await loadDeployment({ configPath, env: {} });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.issues];
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('a config with accounts', () => {
  it('an inline list: shared sections, top-level defaults deep-merged, each account in its own state file', async () => {
    const file = tempConfig({
      'freight-sync.yaml': `
state: { path: ./data/state.sqlite }
log: { level: warn }
api:
  variant: main
  rateLimit: { requestsPerSecond: 3 }
sync:
  defaults: { schedule: '*/2 * * * *' }
webhooks: { enabled: true, listen: 127.0.0.1:8181 }
accounts:${account('acme', 'c-acme', `
    webhooks: { secret: whsec-acme }`, { variant: null })}${account('globex', 'c-globex', `
    webhooks: { secret: whsec-globex, path: /hooks/g }`, { variant: null, api: `https://other.example.test
      rateLimit: { requestsPerSecond: 5 }` })}
`,
    });
    const deployment = await loadDeployment({ configPath: file, env: {} });
    expect(deployment.multiAccount).toBe(true);
    const [acme, globex] = deployment.accounts;
    expect(acme!.account).toEqual({ name: 'acme' });
    expect(globex!.account).toEqual({ name: 'globex' });
    const dir = path.dirname(file);
    expect(acme!.config.state.path).toBe(path.join(dir, 'data/state.acme.sqlite'));
    expect(globex!.config.state.path).toBe(path.join(dir, 'data/state.globex.sqlite'));
    // Defaults reach every account; an account's own value wins, key by key.
    expect(acme!.config.api.rateLimit.requestsPerSecond).toBe(3);
    expect(globex!.config.api.rateLimit.requestsPerSecond).toBe(5);
    expect(globex!.config.api.baseUrl).toBe('https://other.example.test');
    expect(globex!.config.api.variant).toBe('main');
    expect(acme!.config.sync.defaults.schedule).toBe('*/2 * * * *');
    expect(acme!.config.log.level).toBe('warn');
    // A receiver without its own path gets /webhooks/<name>.
    expect(acme!.config.webhooks.path).toBe('/webhooks/acme');
    expect(globex!.config.webhooks.path).toBe('/hooks/g');
  });

  it('on PostgreSQL each account has the schema <schema>_<name>; leases live in the shared schema', async () => {
    const file = tempConfig({
      'freight-sync.yaml': `
state: { url: 'postgres://u@127.0.0.1/db', schema: fs_prod }
accounts:${account('acme', 'c-acme')}${account('globex', 'c-globex')}
`,
    });
    const { accounts } = await loadDeployment({ configPath: file, env: {} });
    expect(accounts.map((a) => a.config.state.schema)).toEqual(['fs_prod_acme', 'fs_prod_globex']);
    expect(accounts.map((a) => a.account)).toEqual([
      { name: 'acme', leaseSchema: 'fs_prod' },
      { name: 'globex', leaseSchema: 'fs_prod' },
    ]);
  });

  it('a folder of account files: one account per file, named by the file, paths relative to it', async () => {
    const file = tempConfig({
      'freight-sync.yaml': `
api: { variant: brokerage }
accounts: { dir: ./accounts }
`,
      'accounts/acme.yaml': accountFile('c-acme', { variant: null }),
      'accounts/globex.yml': accountFile('c-globex', { variant: null }),
      'accounts/README.md': 'not an account',
    });
    const { accounts } = await loadDeployment({ configPath: file, env: {} });
    expect(accounts.map((a) => a.account!.name)).toEqual(['acme', 'globex']);
    expect(accounts.every((a) => a.config.api.variant === 'brokerage')).toBe(true);
    expect(accounts[0]!.baseDir).toBe(path.join(path.dirname(file), 'accounts'));
  });

  it('reports every problem of every account at once', async () => {
    const file = tempConfig({
      'freight-sync.yaml': `
connectors:
  shared: { type: csv, options: { directory: ./x } }
accounts:${account('acme', 'c-1', `
    http: { listen: 127.0.0.1:1 }`)}${account('acme', 'c-2')}${account('Bad-Name', 'c-3')}${account('dup', 'c-1')}
  - name: nosecret
    api: { variant: main, baseUrl: https://api.example.test, auth: { clientId: c-9, clientSecret: s } }
    webhooks: { enabled: true }
`,
    });
    const issues = await problems(file);
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^connectors: with accounts, each account names its own connectors/),
        'accounts[0].http: is shared by every account; set it at the top level of the config',
        'accounts[1].name: account acme is also named by accounts[0]',
        expect.stringMatching(/^accounts\[2\]\.name: "Bad-Name" must start with a lower-case letter/),
        'accounts[3]: accounts acme and dup use the same API credentials on https://api.example.test (one account, configured twice)',
        expect.stringMatching(/^account nosecret \(accounts\[4\]\): webhooks\.secret: is required/),
      ]),
    );
  });

  it('two accounts configuring the same sink (an account file copied) are refused', async () => {
    const file = tempConfig({
      'freight-sync.yaml': 'accounts: { dir: ./accounts }\n',
      'accounts/acme.yaml': accountFile('c-acme', { out: 'all' }),
      'accounts/globex.yaml': accountFile('c-globex', { out: 'all' }),
    });
    expect(await problems(file)).toEqual([expect.stringMatching(/accounts\/globex\.yaml\.connectors\.out: accounts acme and globex configure the same connector/)]);
  });

  it('an empty list, a bad accounts value and the console are refused with a reason', async () => {
    expect(await problems(tempConfig({ 'freight-sync.yaml': 'accounts: []\n' }))).toEqual([expect.stringMatching(/^accounts: the list is empty/)]);
    expect(await problems(tempConfig({ 'freight-sync.yaml': 'accounts: 3\n' }))).toEqual([expect.stringMatching(/^accounts: expected a list of accounts/)]);
    const console = tempConfig({
      'freight-sync.yaml': `
http: { enabled: true, console: { enabled: true, auth: { bearerToken: t0ken-t0ken-t0ken } } }
accounts:${account('acme', 'c-1')}
`,
    });
    expect(await problems(console)).toEqual([expect.stringMatching(/^http\.console\.enabled: the web console shows a single account/)]);
  });

  it('--account picks one; without it a command that acts on one account names the choices', async () => {
    const file = tempConfig({ 'freight-sync.yaml': `accounts:${account('acme', 'c-1')}${account('globex', 'c-2')}\n` });
    expect((await loadConfig({ configPath: file, env: {}, account: 'globex' })).account?.name).toBe('globex');
    await expect(loadConfig({ configPath: file, env: {} })).rejects.toThrow(new UsageError(`${file} configures 2 accounts (acme, globex): pass --account NAME`));
    await expect(loadConfig({ configPath: file, env: {}, account: 'nope' })).rejects.toThrow(/--account nope: no such account .* \(accounts: acme, globex\)/);
    const single = tempConfig({ 'freight-sync.yaml': accountFile('c-1') });
    await expect(loadConfig({ configPath: single, env: {}, account: 'acme' })).rejects.toThrow(/has no accounts section/);
    expect((await loadConfig({ configPath: single, env: {} })).account).toBeUndefined();
  });
});
