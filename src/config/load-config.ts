import fs from 'node:fs';
import path from 'node:path';
import dotenv from 'dotenv';
import { parseDocument } from 'yaml';
import { ConfigError, UsageError } from '../util/errors.js';
import { accountsSpecOf, asRecord, inlineSource, SHARED_SECTIONS, sharedLeaseSchema, splitAccounts, type AccountEntry } from './accounts.js';
import { interpolateConfig, type Environment } from './interpolate.js';
import { parseConfig } from './parse-config.js';
import type { FreightSyncConfig } from './schema.js';

export const CONFIG_ENV_VAR = 'FREIGHT_SYNC_CONFIG';
export const DEFAULT_CONFIG_PATH = path.join('config', 'freight-sync.yaml');

export interface LoadConfigOptions {
  /** `-c FILE`; wins over $FREIGHT_SYNC_CONFIG and the default path. */
  configPath?: string;
  /** Default: process.cwd(). */
  cwd?: string;
  /**
   * Variables for `${VAR}`; `.env` files fill in names not already set. Default: process.env
   * (so the rest of the process sees the .env values too, as with plain dotenv).
   */
  env?: Record<string, string | undefined>;
}

export interface LoadedConfig {
  config: FreightSyncConfig;
  /** Absolute path of the file that was read. */
  filePath: string;
  /** The file's folder; relative paths in the config resolve against it. */
  baseDir: string;
  /** Set when the file names several accounts (`accounts`): which one this is. */
  account?: DeploymentAccount;
}

/** One account of a deployment with an `accounts` key. */
export interface DeploymentAccount {
  name: string;
  /** PostgreSQL: the shared schema with every account's lease and the replicas (the account's own state is in its own schema). */
  leaseSchema?: string;
}

/** What a config file describes: one account (no `accounts` key), or several. */
export interface LoadedDeployment {
  filePath: string;
  baseDir: string;
  /** True when the file has an `accounts` key (even with a single account in it). */
  multiAccount: boolean;
  accounts: LoadedConfig[];
}

export interface SelectAccountOptions {
  /** `--account NAME`: required to pick one of several accounts. */
  account?: string;
}

/** Where the config file is: `-c`, else $FREIGHT_SYNC_CONFIG, else config/freight-sync.yaml. */
export function resolveConfigPath(options: LoadConfigOptions = {}): string {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const chosen = options.configPath ?? nonEmpty(env[CONFIG_ENV_VAR]) ?? DEFAULT_CONFIG_PATH;
  return path.resolve(cwd, chosen);
}

/**
 * The config of one account: the file's only account, or the one `account` names. A file with
 * several accounts and no `account` is a usage error listing them.
 */
export async function loadConfig(options: LoadConfigOptions & SelectAccountOptions = {}): Promise<LoadedConfig> {
  return selectAccount(await loadDeployment(options), options.account);
}

/** Narrows a deployment to one account (see loadConfig); `--account` is how the CLI names it. */
export function selectAccount(deployment: LoadedDeployment, account: string | undefined): LoadedConfig {
  return selectAccounts(deployment, account)[0]!;
}

/** Every account, or only the one `account` names (an unknown name is a usage error listing the others). */
export function selectAccounts(deployment: LoadedDeployment, account: string | undefined, options: { all?: boolean } = {}): LoadedConfig[] {
  const names = deployment.accounts.map((a) => a.account?.name ?? '');
  if (account !== undefined) {
    if (!deployment.multiAccount) throw new UsageError(`--account ${account}: ${deployment.filePath} has no accounts section (it configures one account; drop --account)`);
    const found = deployment.accounts.find((a) => a.account?.name === account);
    if (!found) throw new UsageError(`--account ${account}: no such account in ${deployment.filePath} (accounts: ${names.join(', ')})`);
    return [found];
  }
  if (options.all || deployment.accounts.length === 1) return deployment.accounts;
  throw new UsageError(`${deployment.filePath} configures ${deployment.accounts.length} accounts (${names.join(', ')}): pass --account NAME`);
}

/**
 * Reads, interpolates and validates the config file and, with an `accounts` key, each account
 * (see accounts.ts). Every problem of every account is collected into one ConfigError.
 */
export async function loadDeployment(options: LoadConfigOptions = {}): Promise<LoadedDeployment> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  loadDotEnvFiles(env, cwd);
  const filePath = resolveConfigPath({ ...options, cwd, env });
  const baseDir = path.dirname(filePath);
  // The .env beside the config file counts too (a daemon is rarely started from that folder).
  loadDotEnvFiles(env, baseDir);

  const text = await readConfigFile(filePath);
  const parsed = parseYaml(text, filePath);
  const { value, issues } = interpolateConfig(parsed, env as Environment);
  const top = asRecord(value);
  if (top && 'accounts' in top) return loadAccounts(top, issues, { filePath, baseDir, env: env as Environment });
  const config = parseReportingAll(value, issues, { source: filePath, baseDir });
  return { filePath, baseDir, multiAccount: false, accounts: [{ config, filePath, baseDir }] };
}

async function loadAccounts(
  top: Record<string, unknown>,
  interpolationIssues: readonly string[],
  where: { filePath: string; baseDir: string; env: Environment },
): Promise<LoadedDeployment> {
  const { filePath, baseDir } = where;
  const { spec, issues: specIssues } = accountsSpecOf(top['accounts'], baseDir);
  const issues = [...interpolationIssues, ...specIssues];
  const entries: AccountEntry[] = [];
  if (spec?.kind === 'inline') {
    spec.entries.forEach((entry, index) => {
      const raw = asRecord(entry);
      if (raw) entries.push({ source: inlineSource(index), baseDir, raw });
      else issues.push(`${inlineSource(index)}: expected an account (name, api, sync, connectors, …)`);
    });
  } else if (spec?.kind === 'dir') {
    for (const file of await accountFiles(spec.dir)) {
      const parsed = parseYaml(await readConfigFile(file), file);
      const interpolated = interpolateConfig(parsed, where.env);
      issues.push(...interpolated.issues.map((issue) => `${file}: ${issue}`));
      const raw = asRecord(interpolated.value) ?? {};
      entries.push({ source: file, baseDir: path.dirname(file), raw, impliedName: path.basename(file).replace(/\.ya?ml$/i, '') });
    }
    if (entries.length === 0) issues.push(`accounts.dir: ${spec.dir} holds no account files (*.yaml, *.yml)`);
  }
  const { accounts: inputs, issues: splitIssues } = splitAccounts(top, entries);
  issues.push(...splitIssues);
  const stateSection = asRecord(top['state']) ?? {};
  const leaseSchema = sharedLeaseSchema(stateSection);
  const accounts: LoadedConfig[] = [];
  const sharedPrefixes = SHARED_SECTIONS.map((section) => `${section}.`);
  inputs.forEach((input, index) => {
    try {
      const config = parseConfig(input.raw, { source: input.source, baseDir: input.baseDir, stateBaseDir: baseDir });
      accounts.push({ config, filePath, baseDir: input.baseDir, account: { name: input.name, ...(leaseSchema ? { leaseSchema } : {}) } });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      // A shared section's problem is reported once (with the first account), not once per account.
      const own = error.issues.filter((issue) => index === 0 || !sharedPrefixes.some((prefix) => issue.startsWith(prefix)));
      issues.push(...own.map((issue) => (sharedPrefixes.some((prefix) => issue.startsWith(prefix)) ? issue : `account ${input.name} (${input.source}): ${issue}`)));
    }
  });
  if (accounts[0]?.config.http.console.enabled) {
    issues.push('http.console.enabled: the web console shows a single account and is not available with accounts yet (use `freight-sync status`, /readyz and /metrics, which cover every account)');
  }
  if (issues.length > 0) throw new ConfigError([...new Set(issues)], filePath);
  return { filePath, baseDir, multiAccount: true, accounts };
}

/** The account files of `accounts.dir`, sorted (dot files and other extensions are ignored). */
async function accountFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.promises.readdir(dir);
  } catch (error) {
    throw new ConfigError([`accounts.dir: cannot read ${dir}: ${(error as Error).message}`]);
  }
  return names
    .filter((name) => !name.startsWith('.') && /\.ya?ml$/i.test(name))
    .sort()
    .map((name) => path.join(dir, name));
}

/**
 * parseConfig that also reports the interpolation problems found before it: a missing variable
 * leaves its "${…}" text in place, so validate anyway and list every problem of the file in one go.
 */
function parseReportingAll(value: unknown, interpolationIssues: readonly string[], options: { source: string; baseDir: string }): FreightSyncConfig {
  if (interpolationIssues.length === 0) return parseConfig(value, options);
  try {
    parseConfig(value, options);
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError([...interpolationIssues, ...error.issues], options.source);
    throw error;
  }
  throw new ConfigError(interpolationIssues, options.source);
}

function loadDotEnvFiles(env: Record<string, string | undefined>, dir: string): void {
  const file = path.join(dir, '.env');
  if (!fs.existsSync(file)) return;
  // override: false — a variable set in the real environment always wins over the file.
  const result = dotenv.config({ path: file, processEnv: env as dotenv.DotenvPopulateInput, override: false, quiet: true });
  if (result.error) throw new ConfigError([`cannot read ${file}: ${result.error.message}`]);
}

async function readConfigFile(filePath: string): Promise<string> {
  try {
    return await fs.promises.readFile(filePath, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? `config file not found: ${filePath} (pass -c FILE or set ${CONFIG_ENV_VAR})`
        : `cannot read config file ${filePath}: ${(error as Error).message}`;
    throw new ConfigError([reason]);
  }
}

/** YAML → plain data; syntax errors name the file, line and column. */
export function parseYaml(text: string, filePath: string): unknown {
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    // Later errors are almost always consequences of the first one: report that one only.
    const issues = document.errors.slice(0, 1).map((error) => {
      const position = error.linePos?.[0];
      const where = position ? `${filePath}:${position.line}:${position.col}` : filePath;
      // The first line of yaml's message is the description; the rest is a source excerpt.
      const description = error.message.split('\n')[0] ?? error.message;
      return `${where}: YAML syntax error: ${description.replace(/ at line \d+, column \d+:?$/, '')}`;
    });
    throw new ConfigError(issues, filePath);
  }
  // An empty file is an empty mapping; the schema then lists what is required.
  return document.toJS() ?? {};
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
