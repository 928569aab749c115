import { ApiAuthError, ApiEncodingError, ApiError, ApiNetworkError, ApiResponseError, ApiRetriesExhaustedError, ApiUnsupportedError } from '../api/errors.js';
import { isAbortError } from '../util/abort.js';

/**
 * What a failed call means for the command:
 * - `rejected`: the API refused it (4xx other than 401/408/429): final, the message names the field;
 * - `ambiguous`: the request may have been processed (timeout, dropped connection, 5xx, a 2xx
 *   body that cannot be read): a POST is looked up before anything is sent again;
 * - `retryable`: certainly not processed (429, refused connection, auth trouble): send again later;
 * - `aborted`: we stopped it; treated as ambiguous for POSTs.
 */
export type FailureClass = 'rejected' | 'ambiguous' | 'retryable' | 'aborted';

export function classifyFailure(error: unknown): FailureClass {
  if (isAbortError(error)) return 'aborted';
  if (error instanceof ApiRetriesExhaustedError) return classifyFailure(error.lastError);
  if (error instanceof ApiError) {
    if (error.status === 429 || error.status === 401) return 'retryable';
    if (error.status === 408 || error.status >= 500) return 'ambiguous';
    return 'rejected';
  }
  if (error instanceof ApiNetworkError) return error.mayHaveBeenProcessed ? 'ambiguous' : 'retryable';
  if (error instanceof ApiResponseError) return 'ambiguous';
  if (error instanceof ApiAuthError) return 'retryable';
  if (error instanceof ApiUnsupportedError) return 'rejected';
  // Unknown errors (bugs, disk trouble) are retried within the attempt bound, as if ambiguous.
  return 'ambiguous';
}

/** The API's own words for a rejection, e.g. `HTTP 400: preSetOrderStatus is not an allowed value`. */
export function describeRejection(error: unknown): string {
  if (error instanceof ApiRetriesExhaustedError) return describeRejection(error.lastError);
  // An encoding refusal is a setting to change, not a bad row: its message names api.requestEncoding.
  if (error instanceof ApiEncodingError) return error.message;
  if (error instanceof ApiError) return `the API rejected it (HTTP ${error.status}): ${error.serverMessage}`;
  return error instanceof Error ? error.message : String(error);
}

/** The HTTP status of an API answer (through the client's retry wrapper), if the failure was one. */
export function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof ApiRetriesExhaustedError) return httpStatusOf(error.lastError);
  return error instanceof ApiError ? error.status : undefined;
}
