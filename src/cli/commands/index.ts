import type { RegisterCommand } from '../command-context.js';
import { register as validateConfig } from './validate-config.js';

/**
 * Every command of the CLI, in the order `--help` lists them. A command is added here only when
 * it works end to end.
 */
export const commandModules: RegisterCommand[] = [
  validateConfig,
];
