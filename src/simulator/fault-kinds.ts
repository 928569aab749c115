/** The faults the simulator can inject; apart from options.ts so `freight-sync simulate --help` lists them without loading zod. */
export const FAULT_KINDS = ['500', '502', '503', 'html', 'drop', 'slow', 'truncated'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
