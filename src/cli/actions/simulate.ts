import { startSimulator, type SimulatorOptions } from '../../simulator/index.js';

/** Runs the simulator until SIGINT or SIGTERM (flags parsed in commands/simulate.ts; this loads only when it runs). */
export async function simulateAction(options: Partial<SimulatorOptions>): Promise<void> {
  const sim = await startSimulator(options);
  const out = process.stdout;
  out.write(`Freight API simulator (${sim.options.variant}) listening\n`);
  out.write(`  base URL:      ${sim.baseUrl}\n`);
  out.write(`  client id:     ${sim.options.clientId}\n`);
  out.write(`  client secret: ${sim.options.clientSecret}\n`);
  out.write(`  admin URL:     ${sim.adminUrl}\n`);
  out.write(`  loads: ${sim.options.loads}, seed: ${sim.options.seed}; press Ctrl-C to stop\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sim.close();
  out.write('simulator stopped\n');
}
