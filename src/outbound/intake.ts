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
    const prepared: Prepared[] = [];
    for (const request of unit.requests) prepared.push(await this.prepare(request, folder));

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

  private async prepare(request: InboundRequest, folder: string | undefined): Promise<Prepared> {
    if (request.problem) return { ref: request.ref, error: request.problem };
    try {
      const parsed = await parseRequest(request.fields, { variant: this.deps.variant, attachmentFolder: folder });
      if (!parsed.ok) return { ref: request.ref, error: parsed.error };
      const resolved = await resolveParties(parsed.command, this.deps.stores.directory);
      if (!resolved.ok) return { ref: request.ref, error: resolved.error };
      return { ref: request.ref, command: resolved.command };
    } catch (error) {
      return { ref: request.ref, error: `could not read the request: ${describeError(error)}` };
    }
  }

  private async place(
    outbox: OutboxStore,
    command: OutboundCommand,
    origin: { source: string; unit: string; ref: string },
  ): Promise<{ id: number; duplicateOf?: number } | { error: string }> {
    const { payload, contentHash } = encodeCommand(command);
    const latest = await outbox.latest(command.erpKey, command.kind);
    if (latest && latest.content_hash === contentHash) return { id: latest.id, duplicateOf: latest.id };
    if (latest && command.kind === 'create') {
      const where = latest.result_reference_number ? `, load ${latest.result_reference_number}` : '';
      return {
        error: `erp_key: "${command.erpKey}" was already received as a create with different content (outbox #${latest.id}, ${latest.state}${where}); a load is created once per ERP key: send the changes as kind update`,
      };
    }
    const group = 'target' in command ? await this.groupOf(outbox, command.target) : { group: `erp:${command.erpKey}` };
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

/** Local inboxes: `file` paths are relative to the folder of the inbox file. */
function attachmentFolder(location: string): string | undefined {
  if (!path.isAbsolute(location)) return undefined;
  const folder = path.dirname(location);
  return fs.existsSync(folder) ? folder : undefined;
}
