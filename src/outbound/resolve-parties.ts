import { PARTY_FIELDS, partyBodyOf, type OutboundCommand } from './commands/command.js';
import type { CustomerDirectoryStore, DirectoryEntry } from '../state/stores/customer-directory-store.js';
import type { CodeLookup } from './customer-codes.js';

/** Looks like an API id (Mongo ObjectId): accepted as is even when the directory does not know it. */
const API_ID = /^[0-9a-f]{24}$/i;

export type ResolveOutcome = { ok: true; command: OutboundCommand } | { ok: false; error: string };

/**
 * Replaces ERP codes in `caller`, `shipper` and `consignee` by API ids: a value that is a known
 * `_id` stays, a `companyID` or exact company name maps to its `_id`, an unknown 24-hex value is
 * taken as an id the directory has not seen yet. Anything else is a precise error such as
 * `caller: unknown customer code "ACME-9" (not among 150 synced customers; is the customers
 * stream enabled?)`.
 *
 * `codes` (intake) recognises the codes of customers this outbox creates (`customer_create`); they
 * win over synced customers, stay in the body and are listed in `customerCodes`, so the command
 * gets the new customer's id when it runs.
 */
export async function resolveParties(
  command: OutboundCommand,
  directory: CustomerDirectoryStore,
  codes?: (code: string) => Promise<CodeLookup>,
): Promise<ResolveOutcome> {
  const body = partyBodyOf(command);
  if (!body) return { ok: true, command };
  const wanted: string[] = [];
  for (const field of PARTY_FIELDS) {
    const value = body[field];
    if (typeof value === 'string') wanted.push(value);
    else if (Array.isArray(value)) wanted.push(...value.filter((v): v is string => typeof v === 'string'));
  }
  if (wanted.length === 0) return { ok: true, command };
  const entries = await directory.lookup(wanted);
  const problems: string[] = [];
  let known: number | undefined;
  const deferred = new Set<string>();
  const resolve = async (field: string, value: string): Promise<string | undefined> => {
    const own = codes ? await codes(value) : { kind: 'unknown' as const };
    if (own.kind === 'deferred') {
      deferred.add(value);
      return value;
    }
    if (own.kind === 'error') {
      problems.push(`${field}: ${own.error}`);
      return undefined;
    }
    const match = pick(entries, value, field);
    if (match.kind === 'one') return match.id;
    if (match.kind === 'many') {
      problems.push(`${field}: customer code "${value}" is ambiguous (${match.ids.length} synced customers match: ${match.ids.slice(0, 3).join(', ')}); use the API id`);
      return undefined;
    }
    if (API_ID.test(value)) return value;
    known ??= await directory.count();
    problems.push(`${field}: unknown customer code "${value}" (not among ${known} synced customers; is the customers stream enabled?)`);
    return undefined;
  };
  const resolved: Record<string, unknown> = { ...body };
  for (const field of PARTY_FIELDS) {
    const value = body[field];
    if (typeof value === 'string') resolved[field] = await resolve(field, value);
    else if (Array.isArray(value)) {
      const ids: string[] = [];
      for (const [index, item] of value.entries()) {
        const id = typeof item === 'string' ? await resolve(`${field}[${index}]`, item) : undefined;
        if (id) ids.push(id);
      }
      resolved[field] = ids;
    }
  }
  if (problems.length > 0) return { ok: false, error: problems.join('; ') };
  const customerCodes = deferred.size > 0 ? { customerCodes: [...deferred].sort() } : {};
  return { ok: true, command: { ...command, body: resolved, ...customerCodes } as OutboundCommand };
}

type Match = { kind: 'none' } | { kind: 'one'; id: string } | { kind: 'many'; ids: string[] };

/** Id first (exact), then companyID, then company name; consignee fields prefer consignee records. */
function pick(entries: readonly DirectoryEntry[], value: string, field: string): Match {
  const byId = entries.filter((e) => e.id === value);
  if (byId.length > 0) return { kind: 'one', id: value };
  for (const key of ['companyId', 'companyName'] as const) {
    let found = entries.filter((e) => e[key] === value);
    if (field.startsWith('consignee') && found.some((e) => e.collection === 'consignees')) found = found.filter((e) => e.collection === 'consignees');
    else if (!field.startsWith('consignee') && found.some((e) => e.collection === 'customers')) found = found.filter((e) => e.collection === 'customers');
    const ids = [...new Set(found.map((e) => e.id))];
    if (ids.length === 1) return { kind: 'one', id: ids[0]! };
    if (ids.length > 1) return { kind: 'many', ids };
  }
  return { kind: 'none' };
}
