import type { Command } from 'commander';
import pLimit from 'p-limit';
import { openApp, type AppContext } from '../app/compose.js';
import { validateDeployment, type ValidatedDeployment } from '../app/validate-deployment.js';
import { loadDeployment, selectAccounts, type LoadedConfig } from '../config/load-config.js';
import { LOG_LEVELS, type LogLevel } from '../config/types.js';
import { ConfigError, UsageError } from '../util/errors.js';
import { createLogger, type Logger } from '../util/logger.js';
import { globalOptions } from './command-context.js';

export interface CommandRuntime {
  loaded: LoadedConfig;
  /** What validation resolved (streams, connector options, mappings); nothing is created yet. */
  deployment: ValidatedDeployment;
  logger: Logger;
}

/**
 * Loads and validates the config named by the global options (the same validateDeployment as
 * `validate-config`, so a file it accepts starts, and a file it refuses stops here with exit 2
 * before any folder, file or database exists), and builds the logger the config asks for.
 */
export async function prepareCommand(command: Command): Promise<CommandRuntime> {
  return (await prepareAccounts(command, { all: false })).runtimes[0]!;
}

/** What `prepareAccounts` found: one runtime per account it acts on. */
export interface AccountsRuntime {
  runtimes: CommandRuntime[];
  /** The config has an `accounts` key (output then names each account). */
  multiAccount: boolean;
  logger: Logger;
}

/**
 * prepareCommand for the commands that act on every account of a config with `accounts` (`run`,
 * `status`, `validate-config`), or on the one `--account` names. Other commands act on one
 * account: with several, `--account` is required (all: false). Every account is validated before
 * anything is created; the problems of all of them are reported together.
 */
export async function prepareAccounts(command: Command, options: { all: boolean }): Promise<AccountsRuntime> {
  const globals = globalOptions(command);
  if (globals.logLevel && !(LOG_LEVELS as readonly string[]).includes(globals.logLevel)) {
    throw new UsageError(`--log-level: expected one of ${LOG_LEVELS.join(', ')}, got "${globals.logLevel}"`);
  }
  const loadedDeployment = await loadDeployment({ configPath: globals.config });
  const selected = selectAccounts(loadedDeployment, globals.account, { all: options.all });
  const issues: string[] = [];
  const deployments: ValidatedDeployment[] = [];
  for (const loaded of selected) {
    try {
      deployments.push(await validateDeployment(loaded));
    } catch (error) {
      if (!(error instanceof ConfigError) || !loaded.account) throw error;
      issues.push(...error.issues.map((issue) => `account ${loaded.account!.name}: ${issue}`));
    }
  }
  if (issues.length > 0) throw new ConfigError(issues, loadedDeployment.filePath);
  // The log section is shared by every account.
  const { log } = selected[0]!.config;
  const logger = createLogger({ level: (globals.logLevel as LogLevel | undefined) ?? log.level, pretty: log.pretty === 'auto' ? undefined : log.pretty });
  return {
    runtimes: deployments.map((deployment) => ({ loaded: deployment.loaded, deployment, logger })),
    multiAccount: loadedDeployment.multiAccount,
    logger,
  };
}

/** Opens the app for the command, runs `work`, and always closes it. */
export async function withApp<T>(
  runtime: CommandRuntime,
  options: { withConnectors: boolean; streams?: readonly string[]; signal?: AbortSignal; withSources?: boolean },
  work: (app: AppContext) => Promise<T>,
): Promise<T> {
  const app = await openApp(runtime.loaded, { logger: runtime.logger, ...options });
  try {
    return await work(app);
  } finally {
    await app.close();
  }
}

/**
 * withApp for every account: opened a few at a time (each opens its state, migrates it and creates
 * its connectors; one after the other, 100 accounts took minutes to start), all closed in reverse
 * whatever happens — a failure to open one closes those already open and is rethrown.
 */
export async function withApps<T>(
  runtimes: readonly CommandRuntime[],
  options: { withConnectors: boolean; signal?: AbortSignal },
  work: (apps: AppContext[]) => Promise<T>,
): Promise<T> {
  const opened: Array<AppContext | undefined> = new Array(runtimes.length);
  const limit = pLimit(OPEN_CONCURRENCY);
  try {
    const results = await Promise.allSettled(
      runtimes.map((runtime, index) => limit(async () => (opened[index] = await openApp(runtime.loaded, { logger: runtime.logger, ...options })))),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return await work(opened as AppContext[]);
  } finally {
    for (const app of [...opened].reverse()) await app?.close();
  }
}

/** Accounts opened at once by withApps. */
const OPEN_CONCURRENCY = 4;
