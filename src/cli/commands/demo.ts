import type { Command } from 'commander';

/** `freight-sync demo`: a real sync against the built-in simulator, no config needed. */
export function register(program: Command): void {
  program
    .command('demo')
    .description('Start the built-in API simulator and sync every stream from it into CSV under ./demo-output, then verify the result.')
    .option('-o, --output <dir>', 'output folder (emptied first)', 'demo-output')
    .option('--loads <n>', 'loads in the simulated account', '3000')
    .action(async (options: { output: string; loads: string }, command: Command) => {
      const { demoAction } = await import('../actions/demo.js');
      await demoAction(options, command);
    });
}
