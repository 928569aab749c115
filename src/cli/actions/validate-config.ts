import type { Command } from 'commander';
import { loadDeployment, selectAccounts } from '../../config/load-config.js';
import { displayConfigYaml } from '../../config/display-config.js';
import { validateDeployment } from '../../app/validate-deployment.js';
import { ConfigError } from '../../util/errors.js';
import { globalOptions } from '../command-context.js';

/**
 * Loads and validates the whole deployment — every account of a config with `accounts`, or the one
 * `--account` names — then prints the effective config of each (see commands/validate-config.ts).
 */
export async function validateConfigAction(command: Command): Promise<void> {
  const globals = globalOptions(command);
  const deployment = await loadDeployment({ configPath: globals.config });
  const accounts = selectAccounts(deployment, globals.account, { all: true });
  const issues: string[] = [];
  for (const loaded of accounts) {
    try {
      await validateDeployment(loaded);
    } catch (error) {
      if (!(error instanceof ConfigError) || !loaded.account) throw error;
      issues.push(...error.issues.map((issue) => `account ${loaded.account!.name}: ${issue}`));
    }
  }
  if (issues.length > 0) throw new ConfigError(issues, deployment.filePath);
  if (!deployment.multiAccount) {
    process.stderr.write(`config OK: ${deployment.filePath}\n`);
    process.stdout.write(displayConfigYaml(accounts[0]!.config));
    return;
  }
  process.stderr.write(`config OK: ${deployment.filePath} (${accounts.length} account${accounts.length === 1 ? '' : 's'}: ${accounts.map((a) => a.account!.name).join(', ')})\n`);
  for (const loaded of accounts) process.stdout.write(`# account ${loaded.account!.name}\n---\n${displayConfigYaml(loaded.config)}`);
}
