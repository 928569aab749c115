import type { RegisterCommand } from '../command-context.js';

/**
 * Every command of the CLI, in the order `--help` lists them. A command is added here only when
 * it works end to end.
 */
export const commandModules: RegisterCommand[] = [];
