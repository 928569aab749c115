import path from 'node:path';
import { parseBoolean } from '../util/boolean.js';
import { formatPath } from './format-issues.js';

/**
 * Several API accounts in one deployment (issue 11). A config file with an `accounts` key holds
 * the sections every account shares at the top level (`state`, `log`, `http`, `supervision`,
 * `cluster`), optional defaults for the per-account sections, and the accounts themselves: an
 * inline list, or `accounts: { dir: ./accounts }` with one YAML file per account (adding an account
 * is adding a file). This module turns that into one ordinary config object per account; each is
 * then validated by the same schema as a single-account file.
 */

/** An account's name: its state schema or file, its webhook path, its label in logs and metrics. */
export const ACCOUNT_NAME_PATTERN = /^[a-z][a-z0-9_]{0,39}$/;

/** Process-wide sections: one value for the whole deployment, never set per account. */
export const SHARED_SECTIONS = ['state', 'log', 'http', 'supervision', 'cluster'] as const;

/** Per-account sections that may also be given at the top level as defaults (deep-merged). */
export const DEFAULTABLE_SECTIONS = ['api', 'sync', 'outbound', 'webhooks', 'reconcile', 'notifications'] as const;

/** Per-account only: two accounts writing to the same sink would overwrite each other's rows. */
export const ACCOUNT_ONLY_SECTIONS = ['connectors'] as const;

/** One account entry as written (inline, or read from its file), before merging. */
export interface AccountEntry {
  /** Where it was written, for messages: `accounts[2]` or the account file's path. */
  source: string;
  /** Relative paths inside it resolve against this folder (the account file's, or the config's). */
  baseDir: string;
  /** The entry's content (its `name` key included, when written). */
  raw: Record<string, unknown>;
  /** Name to use when the entry has no `name` key (an account file's base name). */
  impliedName?: string;
}

/** One account's complete config object, ready for parseConfig. */
export interface AccountConfigInput {
  name: string;
  source: string;
  baseDir: string;
  raw: Record<string, unknown>;
}

/** Where the accounts come from, as the `accounts` key says. */
export type AccountsSpec = { kind: 'inline'; entries: unknown[] } | { kind: 'dir'; dir: string };

/** Reads the `accounts` key; issues name what is wrong with it. */
export function accountsSpecOf(value: unknown, baseDir: string): { spec?: AccountsSpec; issues: string[] } {
  if (Array.isArray(value)) {
    if (value.length === 0) return { issues: ['accounts: the list is empty (name at least one account, or remove the key for a single-account config)'] };
    return { spec: { kind: 'inline', entries: value }, issues: [] };
  }
  const record = asRecord(value);
  if (record && Object.keys(record).length === 1 && typeof record['dir'] === 'string' && record['dir'].trim() !== '') {
    return { spec: { kind: 'dir', dir: path.resolve(baseDir, record['dir']) }, issues: [] };
  }
  return { issues: ['accounts: expected a list of accounts, or { dir: <folder with one YAML file per account> }'] };
}

/**
 * Builds each account's config: the shared sections, the top-level defaults deep-merged with the
 * account's own sections, and the state moved to the account's own place — on PostgreSQL the
 * schema `<state.schema>_<name>` (the leases and replicas stay in `state.schema`, shared), on
 * SQLite the file `<stem>.<name><ext>` beside `state.path`. A webhook receiver without its own
 * `path` listens on `/webhooks/<name>`. Returns every problem found, across all accounts.
 */
export function splitAccounts(
  top: Record<string, unknown>,
  entries: readonly AccountEntry[],
): { accounts: AccountConfigInput[]; issues: string[] } {
  const issues: string[] = [];
  for (const section of ACCOUNT_ONLY_SECTIONS) {
    if (section in top) issues.push(`${section}: with accounts, each account names its own ${section} (two accounts must never share a sink); move this section into the accounts`);
  }
  const accounts: AccountConfigInput[] = [];
  const seen = new Map<string, string>();
  for (const entry of entries) {
    const { raw, source } = entry;
    const name = typeof raw['name'] === 'string' ? raw['name'] : entry.impliedName;
    if (name === undefined) {
      issues.push(`${source}.name: is required (a lower-case name such as acme_logistics)`);
      continue;
    }
    if (!ACCOUNT_NAME_PATTERN.test(name)) {
      issues.push(`${source}.name: "${name}" must start with a lower-case letter and hold only a-z, 0-9 and _ (at most 40 characters)`);
      continue;
    }
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      issues.push(`${source}.name: account ${name} is also named by ${earlier}`);
      continue;
    }
    seen.set(name, source);
    for (const section of SHARED_SECTIONS) {
      if (section in raw) issues.push(`${source}.${section}: is shared by every account; set it at the top level of the config`);
    }
    const config: Record<string, unknown> = {};
    for (const section of SHARED_SECTIONS) if (section in top) config[section] = top[section];
    for (const section of DEFAULTABLE_SECTIONS) {
      const merged = deepMerge(top[section], raw[section]);
      if (merged !== undefined) config[section] = merged;
    }
    for (const [key, value] of Object.entries(raw)) {
      // Unknown keys go through so the schema reports them (with its "did you mean").
      if (key !== 'name' && !(key in config) && !(SHARED_SECTIONS as readonly string[]).includes(key)) config[key] = value;
    }
    config['state'] = accountState(asRecord(top['state']) ?? {}, name);
    const webhooks = asRecord(config['webhooks']);
    if (webhooks && webhooks['path'] === undefined) config['webhooks'] = { ...webhooks, path: `/webhooks/${name}` };
    accounts.push({ name, source, baseDir: entry.baseDir, raw: config });
  }
  issues.push(...crossAccountIssues(accounts));
  return { accounts, issues };
}

/**
 * The account's own state location derived from the shared `state` section (on PostgreSQL its
 * leases stay in the shared schema: see sharedLeaseSchema).
 */
export function accountState(state: Record<string, unknown>, name: string): Record<string, unknown> {
  if (typeof state['url'] === 'string') {
    const base = typeof state['schema'] === 'string' ? state['schema'] : 'freight_sync';
    return { ...state, schema: `${base}_${name}` };
  }
  const file = typeof state['path'] === 'string' ? state['path'] : './data/freight-sync.sqlite';
  const ext = path.extname(file);
  return { ...state, path: `${file.slice(0, file.length - ext.length)}.${name}${ext || '.sqlite'}` };
}

/** PostgreSQL: the shared schema holding every account's lease and the replicas; SQLite: none (a file per account). */
export function sharedLeaseSchema(state: Record<string, unknown>): string | undefined {
  if (typeof state['url'] !== 'string') return undefined;
  return typeof state['schema'] === 'string' ? state['schema'] : 'freight_sync';
}

/**
 * Problems only visible across accounts: two accounts with the same API identity (their tokens
 * would rotate under each other) or the same webhook address.
 */
function crossAccountIssues(accounts: readonly AccountConfigInput[]): string[] {
  const issues: string[] = [];
  const identities = new Map<string, string>();
  const hooks = new Map<string, string>();
  const sinks = new Map<string, string>();
  for (const account of accounts) {
    for (const [connector, value] of Object.entries(asRecord(account.raw['connectors']) ?? {})) {
      // Written the same way in the same folder: the same files or tables (an account file copied).
      const c = asRecord(value);
      const identity = `${account.baseDir}|${String(c?.['type'] ?? c?.['module'])}|${JSON.stringify(c?.['options'] ?? {})}`;
      const other = sinks.get(identity);
      if (other !== undefined && other !== account.name) {
        issues.push(`${account.source}.connectors.${connector}: accounts ${other} and ${account.name} configure the same connector (same type and options): they would overwrite each other's records; give each account its own directory, table or database`);
      } else sinks.set(identity, account.name);
    }
    const api = asRecord(account.raw['api']);
    const auth = asRecord(api?.['auth']);
    const who = auth?.['clientId'] ?? auth?.['refreshToken'];
    if (typeof api?.['baseUrl'] === 'string' && typeof who === 'string') {
      const identity = `${api['baseUrl']}|${who}`;
      const other = identities.get(identity);
      if (other !== undefined) issues.push(`${account.source}: accounts ${other} and ${account.name} use the same API credentials on ${api['baseUrl']} (one account, configured twice)`);
      else identities.set(identity, account.name);
    }
    const webhooks = asRecord(account.raw['webhooks']);
    if (webhooks && parseBoolean(webhooks['enabled']) === true) {
      const address = `${String(webhooks['listen'] ?? '127.0.0.1:8080')}${String(webhooks['path'])}`;
      const other = hooks.get(address);
      if (other !== undefined) issues.push(`${account.source}.webhooks.path: accounts ${other} and ${account.name} both receive webhooks at ${address}`);
      else hooks.set(address, account.name);
    }
  }
  return issues;
}

/** Plain objects merge key by key (the account wins); anything else — lists included — is replaced. */
export function deepMerge(defaults: unknown, own: unknown): unknown {
  if (own === undefined) return defaults;
  const a = asRecord(defaults);
  const b = asRecord(own);
  if (!a || !b) return own;
  const out: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) out[key] = deepMerge(a[key], value);
  return out;
}

/** `accounts[3]`-style path of an inline entry. */
export function inlineSource(index: number): string {
  return formatPath(['accounts', index]);
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
