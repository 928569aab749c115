import { Command, CommanderError } from 'commander';
import { isConfigError, isUsageError, describeError } from '../util/errors.js';
import { scrubSecrets } from '../util/secrets.js';
import { EXIT_OK, EXIT_USAGE, EXIT_WORK_FAILED } from './exit-codes.js';
import { commandModules } from './commands/index.js';
import { releaseOptimisingCompiler } from './start-up-tiering.js';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('freight-sync')
    .description('Keeps an ERP in sync with the Freight Operations Public API (pull, push, webhooks).')
    .option('-c, --config <file>', 'config file (default: $FREIGHT_SYNC_CONFIG, else config/freight-sync.yaml)')
    .option('--log-level <level>', 'trace | debug | info | warn | error | fatal | silent')
    .option('--account <name>', 'with a config that names several accounts: the one to act on (run and status act on all by default)')
    .showHelpAfterError()
    .exitOverride()
    // TurboFan was held back while the modules loaded (start-up-tiering.ts); a command's work needs it.
    .hook('preAction', releaseOptimisingCompiler)
    .addHelpText(
      'after',
      '\nExit codes: 0 success, 1 the work failed, 2 bad usage or bad configuration.',
    );
  for (const register of commandModules) register(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit through here with code 0.
      if (error.exitCode === 0) return EXIT_OK;
      return EXIT_USAGE;
    }
    if (isConfigError(error) || isUsageError(error)) {
      process.stderr.write(`freight-sync: ${scrubSecrets(error.message)}\n`);
      return EXIT_USAGE;
    }
    process.stderr.write(`freight-sync: ${scrubSecrets(describeError(error))}\n`);
    return EXIT_WORK_FAILED;
  }
}
