import type { Command } from 'commander';

/** Every command module exports `register(program)` and adds itself to the program. */
export type RegisterCommand = (program: Command) => void;

/** Options every command inherits from the root program. */
export interface GlobalOptions {
  config?: string;
  logLevel?: string;
  /** `--account NAME`: one account of a config with `accounts`. */
  account?: string;
}

export function globalOptions(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}
