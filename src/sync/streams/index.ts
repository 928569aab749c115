import type { ApiVariant } from '../../api/variant.js';
import { STREAM_NAMES, type StreamName } from '../../config/stream-names.js';
import type { AnyStreamDefinition } from '../stream-definition.js';
import { customerAuditsStream, loadAuditsStream } from './audits.js';
import { customerDiscountsStream, customerDynamicRatesStream, customerRatesStream } from './customer-pricing.js';
import { billsStream } from './bills.js';
import { consigneesStream, customersStream } from './customers.js';
import { invoicesStream } from './invoices.js';
import { loadsStream } from './loads.js';
import { chargeCodesStream, loadDocumentTypesStream } from './reference-data.js';
import { supportMovesStream } from './support-moves.js';
import { webhookEventsStream } from './webhook-events.js';
import { eventsStream } from './events.js';
import { loadDocumentsStream } from './load-documents.js';
import { documentFilesStream } from './document-files.js';

/**
 * The definition of each stream name. Typed as a record over `StreamName`, so a name without a
 * definition does not compile (test/unit/stream-names.test.ts checks each is filed under its name).
 */
const DEFINITIONS: Readonly<Record<StreamName, AnyStreamDefinition>> = {
  loads: loadsStream,
  invoices: invoicesStream,
  bills: billsStream,
  supportMoves: supportMovesStream,
  loadAudits: loadAuditsStream,
  customerAudits: customerAuditsStream,
  customers: customersStream,
  consignees: consigneesStream,
  webhookEvents: webhookEventsStream,
  chargeCodes: chargeCodesStream,
  loadDocumentTypes: loadDocumentTypesStream,
  customerDiscounts: customerDiscountsStream,
  customerRates: customerRatesStream,
  customerDynamicRates: customerDynamicRatesStream,
  events: eventsStream,
  loadDocuments: loadDocumentsStream,
  documentFiles: documentFilesStream,
};

/** Every stream, in run order; the order (and why) is `STREAM_NAMES`'s (config/stream-names.ts). */
export const STREAMS: readonly AnyStreamDefinition[] = STREAM_NAMES.map((name) => DEFINITIONS[name]);

export function streamByName(name: StreamName): AnyStreamDefinition {
  // Callers may hold a name from outside the type system (CLI flags, old state rows).
  const found = Object.hasOwn(DEFINITIONS, name) ? DEFINITIONS[name] : undefined;
  if (!found) throw new Error(`unknown stream ${name}`);
  return found;
}

export function streamsForVariant(variant: ApiVariant): AnyStreamDefinition[] {
  return STREAMS.filter((s) => s.variants.includes(variant));
}
