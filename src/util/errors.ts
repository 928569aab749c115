/**
 * Base of every error the project throws on purpose. `code` is stable and machine-readable;
 * `message` names the field, file, row or endpoint at fault. Messages never carry secrets.
 */
export class FreightSyncError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Bad configuration: the CLI exits with code 2. */
export class ConfigError extends FreightSyncError {
  readonly issues: readonly string[];

  constructor(issues: readonly string[], source?: string) {
    const where = source ? ` in ${source}` : '';
    super('CONFIG_INVALID', `invalid configuration${where}:\n  ${issues.join('\n  ')}`);
    this.issues = issues;
  }
}

/** Bad command-line usage: the CLI exits with code 2. */
export class UsageError extends FreightSyncError {
  constructor(message: string) {
    super('USAGE', message);
  }
}

export function isConfigError(error: unknown): error is ConfigError {
  return error instanceof ConfigError;
}

export function isUsageError(error: unknown): error is UsageError {
  return error instanceof UsageError;
}

/** A short, single-line description of any thrown value, for logs and summaries. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
