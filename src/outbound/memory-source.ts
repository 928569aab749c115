import type { CommandSource, DryRunResult, InboundRequest, InboundResult, InboundUnit } from '../contracts/index.js';

/**
 * An in-memory `CommandSource` (tests, the bench, programs embedding freight-sync): units are
 * handed over until `accepted`, like a file left in the inbox after a crash; results are kept
 * per unit.
 */
export class MemorySource implements CommandSource {
  readonly units: InboundUnit[] = [];
  readonly acceptedIds = new Set<string>();
  readonly results = new Map<string, InboundResult[]>();
  /** `push --dry-run` outcomes per unit. */
  readonly dryRunResults = new Map<string, DryRunResult[]>();
  writeBacks = 0;

  add(id: string, requests: Array<Record<string, unknown> | InboundRequest>): InboundUnit {
    const unit: InboundUnit = {
      id,
      location: `memory:${id}`,
      requests: requests.map((r, i) => ('fields' in r && typeof r.fields === 'object' ? (r as InboundRequest) : { ref: String(i + 1), fields: r as Record<string, unknown> })),
    };
    this.units.push(unit);
    return unit;
  }

  async take(): Promise<InboundUnit[]> {
    return this.units.filter((u) => !this.acceptedIds.has(u.id));
  }

  async peek(): Promise<InboundUnit[]> {
    return this.take();
  }

  async writeDryRun(unitId: string, results: readonly DryRunResult[]): Promise<void> {
    this.dryRunResults.set(unitId, [...results]);
  }

  async accepted(unit: InboundUnit): Promise<void> {
    this.acceptedIds.add(unit.id);
  }

  async writeBack(unitId: string, results: readonly InboundResult[]): Promise<void> {
    this.writeBacks += 1;
    this.results.set(unitId, [...results]);
  }

  resultOf(unitId: string, ref: string): InboundResult | undefined {
    return this.results.get(unitId)?.find((r) => r.ref === ref);
  }
}
