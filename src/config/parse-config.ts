import path from 'node:path';
import { ConfigError } from '../util/errors.js';
import { configSchema, type FreightSyncConfig } from './schema.js';
import { formatZodIssues } from './format-issues.js';
import { crossCheckIssues } from './cross-checks.js';
import { registerConfigSecrets } from './mask-secrets.js';

export interface ParseConfigOptions {
  /** Named in the ConfigError (the config file's path, or e.g. "demo config"). */
  source?: string;
  /** Folder relative paths (state.path, connector modules) resolve against; default: cwd. */
  baseDir?: string;
  /** Folder `state.path` resolves against when not `baseDir` (an account file's shared state section). */
  stateBaseDir?: string;
}

/**
 * Validates an already-interpolated config object and returns the effective config. Every
 * problem is collected first and thrown together as one ConfigError (exit code 2).
 */
export function parseConfig(raw: unknown, options: ParseConfigOptions = {}): FreightSyncConfig {
  // Register secrets before anything can fail, so even an error message quoting one is masked.
  registerConfigSecrets(raw);

  const result = configSchema.safeParse(raw, { reportInput: true });
  const issues = result.success ? [] : formatZodIssues(result.error, [], { schema: configSchema, input: raw });
  issues.push(...crossCheckIssues(raw));
  if (!result.success || issues.length > 0) throw new ConfigError(dedupe(issues), options.source);

  return resolvePaths(result.data, options.baseDir ?? process.cwd(), options.stateBaseDir);
}

function resolvePaths(config: FreightSyncConfig, baseDir: string, stateBaseDir = baseDir): FreightSyncConfig {
  const connectors: FreightSyncConfig['connectors'] = {};
  for (const [name, connector] of Object.entries(config.connectors)) {
    // Only path-like module specifiers are files next to the config; bare names are packages.
    const module =
      connector.module !== undefined && /^\.\.?[\\/]/.test(connector.module)
        ? path.resolve(baseDir, connector.module)
        : connector.module;
    connectors[name] = module === undefined ? connector : { ...connector, module };
  }
  return {
    ...config,
    state: { ...config.state, path: path.resolve(stateBaseDir, config.state.path) },
    connectors,
  };
}

function dedupe(lines: string[]): string[] {
  return [...new Set(lines)];
}
