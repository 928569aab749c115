import fs from 'node:fs';
import path from 'node:path';
import type { ApiVariant } from '../api/variant.js';
import type { CommandSource, InboundRequest, InboundUnit } from '../contracts/index.js';
import type { StateStores } from '../state/stores/index.js';
import { describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { encodeCommand } from './command-codec.js';
import type { LoadTarget, OutboundCommand } from './commands/command.js';
import { parseRequest } from './commands/parse-request.js';
import type { OutboxStore } from '../state/stores/outbox-store.js';
import { resolveParties } from './resolve-parties.js';
import { CREATE_KINDS } from './commands/enums.js';
import { codeLookup, customerCreateOf, customerGroup, type CodeLookup } from './customer-codes.js';
import { resolveCustomerTarget } from './customer-target.js';
import type { OutboxRow } from '../state/tables.js';
import type { UnitStore } from '../state/stores/unit-store.js';

export interface NamedSource {
  name: string;
  source: CommandSource;
}

export interface IntakeDeps {
  stores: Pick<StateStores, 'outbox' | 'units' | 'directory' | 'transaction'>;
  variant: ApiVariant;
  logger: Logger;
}

export interface UnitIntake {
  source: string;
  unitId: string;
  /** The unit was stored before (taken again after a crash): nothing new was added. */
  known: boolean;
  requests: number;
  commands: number;
  duplicates: number;
  invalid: number;
}

type Prepared = { ref: string; command: OutboundCommand } | { ref: string; error: string };

/**
 * Stores the requests of a unit durably in the outbox, then lets the source mark the unit taken.
 * Validation (schema, customer codes, attachment files) happens first and outside the
 * transaction; the rows of a unit are written in ONE transaction, so a unit is either stored
 * whole or not at all. Idempotence (design §3, docs/outbound.md "Duplicates"):
 * - a unit id already stored (the source handed it over again after a crash) adds nothing;
 * - a request whose (erp_key, kind) newest revision has the same content is a duplicate: it is
 *   linked to that command and gets its result;
 * - different content under the same key: a create is rejected (a load is created once; send
 *   changes as kind update), other kinds become the next revision, applied after the earlier one.
 */
export class Intake {
  private readonly outbox: OutboxStore;
  private readonly units: UnitStore;

  constructor(private readonly deps: IntakeDeps) {
    this.outbox = deps.stores.outbox;
    this.units = deps.stores.units;
  }

  /** Takes every available unit of one source. A failing unit is logged and left for the next poll. */
  async takeFrom(named: NamedSource, signal: AbortSignal): Promise<UnitIntake[]> {
    const units = await named.source.take(signal);
    const out: UnitIntake[] = [];
    for (const unit of units) {
      signal.throwIfAborted();
      const stored = await this.store(named.name, unit);
      await named.source.accepted(unit, signal);
      out.push(stored);
    }
    return out;
  }

  async store(source: string, unit: InboundUnit): Promise<UnitIntake> {
    const summary: UnitIntake = { source, unitId: unit.id, known: false, requests: unit.requests.length, commands: 0, duplicates: 0, invalid: 0 };
    if (await this.units.find(source, unit.id)) return { ...summary, known: true };
    const folder = attachmentFolder(unit.location);
    const parsed: Prepared[] = [];
    for (const request of unit.requests) parsed.push(await this.parse(request, folder));
    // Customers created by this unit may be named by loads anywhere in it (before or after them).
    const unitCodes = new Set(parsed.flatMap((item) => ('command' in item && item.command.kind === 'customer_create' ? [item.command.customerCode] : [])));
    const codes = codeLookup(this.outbox, unitCodes);
    const prepared: Prepared[] = [];
    for (const item of parsed) prepared.push('command' in item ? await this.resolve(item, codes) : item);

    await this.deps.stores.transaction(async (tx) => {
      const { outbox, units } = tx;
      await units.insert(source, unit.id, unit.location, unit.requests.length);
      let seq = 0;
      for (const item of prepared) {
        seq += 1;
        if ('error' in item) {
          summary.invalid += 1;
          await units.addEntry(source, unit.id, { ref: item.ref, seq, outboxId: null, error: item.error, note: null });
          continue;
        }
        const placed = await this.place(outbox, item.command, { source, unit: unit.id, ref: item.ref });
        if ('error' in placed) summary.invalid += 1;
        else if (placed.duplicateOf !== undefined) summary.duplicates += 1;
        else summary.commands += 1;
        await units.addEntry(source, unit.id, {
          ref: item.ref,
          seq,
          outboxId: 'error' in placed ? null : placed.id,
          error: 'error' in placed ? placed.error : null,
          note: 'error' in placed || placed.duplicateOf === undefined ? null : `duplicate of outbox #${placed.duplicateOf}`,
        });
      }
    });
    if (summary.invalid > 0) this.deps.logger.warn({ source, unit: unit.id, invalid: summary.invalid }, `${unit.location}: ${summary.invalid} request(s) rejected`);
    return summary;
  }

  private async parse(request: InboundRequest, folder: string | undefined): Promise<Prepared> {
    if (request.problem) return { ref: request.ref, error: request.problem };
    try {
      const parsed = await parseRequest(request.fields, { variant: this.deps.variant, attachmentFolder: folder });
      return parsed.ok ? { ref: request.ref, command: parsed.command } : { ref: request.ref, error: parsed.error };
    } catch (error) {
      return { ref: request.ref, error: `could not read the request: ${describeError(error)}` };
    }
  }

  /** Customer names in load bodies, and the customer a customer_update acts on, become API ids or deferred codes. */
  private async resolve(item: { ref: string; command: OutboundCommand }, codes: (code: string) => Promise<CodeLookup>): Promise<Prepared> {
    // What is wrong with the request comes back as `{ ok: false }`; anything thrown here comes from
    // the state database (a terminated connection — node-postgres gives that one no `code` —, a
    // busy file) and says nothing about the request: it propagates, and the unit is left for the
    // next poll instead of the request being rejected for good (cluster chaos: pg_terminate_backend
    // failed ERP creates, written back as "could not read the request").
    const resolved =
      item.command.kind === 'customer_update'
        ? await resolveCustomerTarget(item.command, this.deps.stores.directory, codes)
        : await resolveParties(item.command, this.deps.stores.directory, codes);
    return resolved.ok ? { ref: item.ref, command: resolved.command } : { ref: item.ref, error: resolved.error };
  }

  private async place(
    outbox: OutboxStore,
    command: OutboundCommand,
    origin: { source: string; unit: string; ref: string },
  ): Promise<{ id: number; duplicateOf?: number } | { error: string }> {
    const { payload, contentHash } = encodeCommand(command);
    const latest = await outbox.latest(command.erpKey, command.kind);
    if (latest && latest.content_hash === contentHash) return { id: latest.id, duplicateOf: latest.id };
    if (latest && CREATE_KINDS.has(command.kind)) return { error: createConflict(command, latest) };
    if (command.kind === 'customer_create') {
      const other = await customerCreateOf(outbox, command.customerCode);
      if (other) {
        return {
          error: `erp_customer_code: "${command.customerCode}" was already received as a customer_create under erp_key "${other.erp_key}" (outbox #${other.id}, ${other.state}); a customer is created once per ERP code: send changes as kind customer_update`,
        };
      }
    }
    const group = await this.groupFor(outbox, command);
    if ('error' in group) return group;
    const id = await outbox.insertCommand({
      erpKey: command.erpKey,
      kind: command.kind,
      revision: (latest?.revision ?? 0) + 1,
      loadGroup: group.group,
      payload,
      contentHash,
      origin,
    });
    return { id };
  }

  private async groupFor(outbox: OutboxStore, command: OutboundCommand): Promise<{ group: string } | { error: string }> {
    if (command.kind === 'customer_create') return { group: customerGroup(command.customerCode) };
    if (command.kind === 'customer_update') {
      return { group: 'customerCode' in command.target ? customerGroup(command.target.customerCode) : `custid:${command.target.customerId}` };
    }
    if ('target' in command && command.target) return this.groupOf(outbox, command.target);
    return { group: `erp:${command.erpKey}` };
  }

  /** Commands of one load share a group and run in id order (a status change waits for its create). */
  private async groupOf(outbox: OutboxStore, target: LoadTarget): Promise<{ group: string } | { error: string }> {
    if ('loadErpKey' in target) {
      const create = await outbox.latest(target.loadErpKey, 'create');
      if (!create) {
        return {
          error: `load_erp_key: no create with erp_key "${target.loadErpKey}" has been received (send the create first, in an earlier row or file, or give reference_number)`,
        };
      }
      return { group: `erp:${target.loadErpKey}` };
    }
    const create = await outbox.createByReference(target.referenceNumber);
    return { group: create ? `erp:${create.erp_key}` : `ref:${target.referenceNumber}` };
  }
}

function createConflict(command: OutboundCommand, latest: OutboxRow): string {
  const what = command.kind === 'customer_create' ? 'a customer' : command.kind === 'invoice_create' ? 'an invoice' : 'a load';
  const update = command.kind === 'customer_create' ? 'send the changes as kind customer_update' : command.kind === 'invoice_create' ? 'use a new erp_key for another invoice' : 'send the changes as kind update';
  const where = latest.result_reference_number ? `, ${command.kind === 'create' ? 'load ' : ''}${latest.result_reference_number}` : '';
  return `erp_key: "${command.erpKey}" was already received as a ${command.kind} with different content (outbox #${latest.id}, ${latest.state}${where}); ${what} is created once per ERP key: ${update}`;
}

/** Local inboxes: `file` paths are relative to the folder of the inbox file. */
function attachmentFolder(location: string): string | undefined {
  if (!path.isAbsolute(location)) return undefined;
  const folder = path.dirname(location);
  return fs.existsSync(folder) ? folder : undefined;
}
