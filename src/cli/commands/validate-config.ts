import type { Command } from 'commander';
import { globalOptions } from '../command-context.js';
import { loadConfig } from '../../config/load-config.js';
import { displayConfigYaml } from '../../config/display-config.js';

/**
 * `freight-sync validate-config`: loads and validates the config and prints the effective
 * config (defaults applied, secrets masked) as YAML. A ConfigError propagates to the root
 * handler, which prints every issue and exits with code 2.
 */
export function register(program: Command): void {
  program
    .command('validate-config')
    .description('Validate the config file and print the effective config (defaults applied, secrets masked).')
    .action(async (_options: unknown, command: Command) => {
      const { config, filePath } = await loadConfig({ configPath: globalOptions(command).config });
      process.stderr.write(`config OK: ${filePath}\n`);
      process.stdout.write(displayConfigYaml(config));
    });
}
