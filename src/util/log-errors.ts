import { stdSerializers } from 'pino';
import { FreightSyncError } from './errors.js';

/**
 * Node and driver error codes that mean "the other side is down, unreachable or refused us":
 * the operator needs the message, not a stack trace pointing into our code.
 */
const OPERATIONAL_CODE = /^(E[A-Z0-9_]+|ER_[A-Z0-9_]+|UND_ERR_[A-Z_]+|\d{2}[0-9A-Z]{3})$/;

/** Programming errors: a stack is what helps, whatever code they carry (ERR_INVALID_ARG_TYPE is a TypeError). */
const BUG_TYPES = [TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError];

/**
 * An error that is an expected way for the world to fail — credentials rejected, connection
 * refused, DNS, timeouts, a 4xx answer, bad configuration — rather than a defect. Our own errors
 * (FreightSyncError) are thrown on purpose with a message that names the cause; system and driver
 * errors carry an operational `code` (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, 28P01,
 * ER_ACCESS_DENIED_ERROR); aborts and timeouts are named so. Anything else is unexpected.
 */
export function isExpectedFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (BUG_TYPES.some((type) => error instanceof type)) return false;
  if (error instanceof FreightSyncError) return true;
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && OPERATIONAL_CODE.test(code)) return true;
  // A wrapper (a connector's own error class) around an operational failure.
  return error.cause !== undefined && error.cause !== error && isExpectedFailure(error.cause);
}

/** The message, plus the causes' messages that it does not already contain (each cause named once). */
export function messageNamingCauses(error: Error): string {
  let message = error.message;
  const seen = new Set<unknown>([error]);
  let cause: unknown = error.cause;
  while (cause instanceof Error && !seen.has(cause)) {
    seen.add(cause);
    if (cause.message && !names(message, cause.message)) message += `: ${cause.message}`;
    cause = cause.cause;
  }
  return message;
}

/** Whether `message` already says `causeMessage` — whole, or without its `where: ` prefix (an endpoint named once). */
function names(message: string, causeMessage: string): boolean {
  if (message.includes(causeMessage)) return true;
  const at = causeMessage.indexOf(': ');
  return at > 0 && message.includes(causeMessage.slice(at + 2));
}

export interface SerializedLogError {
  type: string;
  message: string;
  code?: string;
  stack?: string;
  [key: string]: unknown;
}

/**
 * pino's `err`/`error` serializer. An expected failure becomes `{ type, code, message }` plus its
 * own scalar fields (status, networkCode, attempts…) — no stack, and each cause named once in the
 * message. An unexpected error keeps pino's full serialization with the stack of every cause.
 * Non-errors (a string `error` field of a summary) pass through unchanged.
 */
export function serializeLogError(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  if (!isExpectedFailure(value)) return stdSerializers.err(value);
  const out: SerializedLogError = { type: value.name || value.constructor.name, message: messageNamingCauses(value) };
  const code = (value as { code?: unknown }).code;
  if (typeof code === 'string') out.code = code;
  for (const [key, field] of Object.entries(value)) {
    if (key in out || key === 'cause' || key === 'name') continue;
    if (typeof field === 'string' || typeof field === 'number' || typeof field === 'boolean') out[key] = field;
  }
  return out;
}
