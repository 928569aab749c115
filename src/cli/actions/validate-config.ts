import type { Command } from 'commander';
import { loadConfig } from '../../config/load-config.js';
import { displayConfigYaml } from '../../config/display-config.js';
import { validateDeployment } from '../../app/validate-deployment.js';
import { globalOptions } from '../command-context.js';

/** Loads and validates the whole deployment, then prints the effective config (see commands/validate-config.ts). */
export async function validateConfigAction(command: Command): Promise<void> {
  const loaded = await loadConfig({ configPath: globalOptions(command).config });
  await validateDeployment(loaded);
  const { config, filePath } = loaded;
  process.stderr.write(`config OK: ${filePath}\n`);
  process.stdout.write(displayConfigYaml(config));
}
