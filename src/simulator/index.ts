export { startSimulator } from './simulator.js';
export type { SimulatorHandle } from './handle.js';
export { simulatorOptionsSchema, configurePatchSchema, FAULT_KINDS } from './options.js';
export type { SimulatorOptions, ConfigurePatch, FaultKind, Variant } from './options.js';
export type { SimulatorStats } from './stats.js';
export { TRUTH_RESOURCES } from './truth.js';
export type { TruthResource } from './truth.js';
export { signBody as signWebhookBody } from './webhook-sender.js';
