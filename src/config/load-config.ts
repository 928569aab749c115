import fs from 'node:fs';
import path from 'node:path';
import dotenv from 'dotenv';
import { parseDocument } from 'yaml';
import { ConfigError } from '../util/errors.js';
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
}

/** Where the config file is: `-c`, else $FREIGHT_SYNC_CONFIG, else config/freight-sync.yaml. */
export function resolveConfigPath(options: LoadConfigOptions = {}): string {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const chosen = options.configPath ?? nonEmpty(env[CONFIG_ENV_VAR]) ?? DEFAULT_CONFIG_PATH;
  return path.resolve(cwd, chosen);
}

export async function loadConfig(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
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
  if (issues.length === 0) return { config: parseConfig(value, { source: filePath, baseDir }), filePath, baseDir };

  // A missing variable leaves its "${…}" text in place; validate anyway so every problem of the
  // file is listed in one go, then report them all.
  try {
    parseConfig(value, { source: filePath, baseDir });
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError([...issues, ...error.issues], filePath);
    throw error;
  }
  throw new ConfigError(issues, filePath);
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
