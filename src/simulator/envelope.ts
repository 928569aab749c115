/**
 * Response envelopes (§2.1, §2.2). `version` is the string "1.0.0", except on a few routes that
 * answer with the number 1 (the spec's samples show both), so clients must accept either.
 */
const NUMERIC_VERSION_ROUTES = new Set(['GET /get-charge-codes', 'GET /load-document-type', 'GET /support-move', 'GET /audit/customer', 'GET /webhook/:id']);

export function versionFor(route: string): string | number {
  return NUMERIC_VERSION_ROUTES.has(route) ? 1 : '1.0.0';
}

export interface OkExtras {
  count?: number;
  other?: Record<string, unknown>;
}

export function okEnvelope(route: string, self: string, data: unknown, extras: OkExtras = {}): Record<string, unknown> {
  const body: Record<string, unknown> = { _object: '/api/response', self, version: versionFor(route) };
  if (extras.count !== undefined) body['count'] = extras.count;
  body['data'] = data;
  body['error'] = null;
  if (extras.other !== undefined) body['other'] = extras.other;
  return body;
}

export function errorEnvelope(route: string, self: string, status: number, message: string): Record<string, unknown> {
  return { _object: '/api/error', self, version: versionFor(route), status, message };
}
