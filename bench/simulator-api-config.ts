import type { SimulatorHandle } from '../src/simulator/index.js';

/**
 * The `api:` block of a bench config pointing at a simulator, with the simulator's own
 * credentials. Benches that run `freight-sync` as a child process write it into their YAML.
 */
export function simulatorApiConfig(sim: SimulatorHandle, rateLimit: { requestsPerSecond: number; maxInFlight: number }): Record<string, unknown> {
  return {
    variant: sim.options.variant,
    baseUrl: sim.baseUrl,
    auth: { clientId: sim.options.clientId, clientSecret: sim.options.clientSecret },
    rateLimit: { ...rateLimit, adaptive: true },
  };
}
