import type { Command } from 'commander';
import { openApp, type AppContext } from '../app/compose.js';
import { validateDeployment, type ValidatedDeployment } from '../app/validate-deployment.js';
import { loadConfig, type LoadedConfig } from '../config/load-config.js';
import { LOG_LEVELS, type LogLevel } from '../config/types.js';
import { UsageError } from '../util/errors.js';
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
  const globals = globalOptions(command);
  if (globals.logLevel && !(LOG_LEVELS as readonly string[]).includes(globals.logLevel)) {
    throw new UsageError(`--log-level: expected one of ${LOG_LEVELS.join(', ')}, got "${globals.logLevel}"`);
  }
  const loaded = await loadConfig({ configPath: globals.config });
  const deployment = await validateDeployment(loaded);
  const logger = createLogger({
    level: (globals.logLevel as LogLevel | undefined) ?? loaded.config.log.level,
    pretty: loaded.config.log.pretty === 'auto' ? undefined : loaded.config.log.pretty,
  });
  return { loaded, deployment, logger };
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
