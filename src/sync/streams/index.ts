import type { ApiVariant } from '../../api/variant.js';
import type { AnyStreamDefinition, StreamName } from '../stream-definition.js';
import { customerAuditsStream, loadAuditsStream } from './audits.js';
import { billsStream } from './bills.js';
import { consigneesStream, customersStream } from './customers.js';
import { invoicesStream } from './invoices.js';
import { loadsStream } from './loads.js';
import { chargeCodesStream, loadDocumentTypesStream } from './reference-data.js';
import { supportMovesStream } from './support-moves.js';
import { webhookEventsStream } from './webhook-events.js';
import { eventsStream } from './events.js';
import { loadDocumentsStream } from './load-documents.js';

/** Every stream, in the order a sync pass runs them (loads first: they feed invoice gap-fill). */
export const STREAMS: readonly AnyStreamDefinition[] = [
  loadsStream,
  invoicesStream,
  billsStream,
  supportMovesStream,
  loadAuditsStream,
  customerAuditsStream,
  customersStream,
  consigneesStream,
  webhookEventsStream,
  chargeCodesStream,
  loadDocumentTypesStream,
  eventsStream,
  loadDocumentsStream,
];

export function streamByName(name: StreamName): AnyStreamDefinition {
  const found = STREAMS.find((s) => s.name === name);
  if (!found) throw new Error(`unknown stream ${name}`);
  return found;
}

export function streamsForVariant(variant: ApiVariant): AnyStreamDefinition[] {
  return STREAMS.filter((s) => s.variants.includes(variant));
}
