/**
 * The logger a plug-in receives: a look-alike of the few pino methods connectors use, so a
 * third-party connector depends on no logging library (pino's `Logger` satisfies it).
 */
export interface ContractLogFn {
  (bindings: object, message?: string): void;
  (message: string): void;
}

export interface ContractLogger {
  debug: ContractLogFn;
  info: ContractLogFn;
  warn: ContractLogFn;
  error: ContractLogFn;
  /** A logger whose every line carries `bindings` (e.g. `{ connector: 'erp' }`). */
  child(bindings: Record<string, unknown>): ContractLogger;
}
