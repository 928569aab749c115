import type { ApiClient } from '../api/api-client.js';
import { listBills } from '../api/endpoints/bills.js';
import { listConsignees } from '../api/endpoints/consignees.js';
import { getCustomerDynamicRates, listCustomerAudits, listCustomerDiscounts, listCustomerRates, listCustomers } from '../api/endpoints/customers.js';
import { listInvoices } from '../api/endpoints/invoices.js';
import { listChargeCodes, listLoadAudits, listLoadDocumentTypes, listLoads } from '../api/endpoints/loads.js';
import { listSupportMoves } from '../api/endpoints/support-moves.js';
import { listWebhookEvents } from '../api/endpoints/webhook-events.js';
import type { StreamName } from '../config/stream-names.js';
import type { RawRecord } from './stream-definition.js';
import { dynamicRateRecords } from './streams/customer-pricing.js';

/** What a probe learned: the endpoint it called and the records the answer held (at most `limit`). */
export interface ProbeResult {
  endpoint: string;
  items: RawRecord[];
  /**
   * True when `items` are records of the stream as it delivers them (mappable with its mapping);
   * false when the stream builds its records from them with more calls (documentFiles: loads,
   * whose documents it downloads).
   */
  streamRecords: boolean;
}

type Probe = (client: ApiClient, signal: AbortSignal, limit?: number) => Promise<ProbeResult>;

const DAY_MS = 86_400_000;
const recent = (client: ApiClient, spanMs: number) => {
  const to = client.clock.now();
  return { from: new Date(to.getTime() - spanMs).toISOString(), to: to.toISOString() };
};
const found = (endpoint: string, items: readonly unknown[], limit: number): ProbeResult => ({
  endpoint,
  items: (items as RawRecord[]).slice(0, limit),
  streamRecords: true,
});

/**
 * One cheap call per stream, the endpoint the stream reads with `limit` records at most (default
 * 1): `freight-sync check` proves permissions and variant support with it, and `discover
 * --sample N` shows what the records look like. Streams that read no endpoint of their own
 * (events and load documents come from the webhook inbox) have none. Time-filtered endpoints look
 * at a recent span only (invoices: billed in the last 30 days; audits: the last day).
 */
const loadsProbe: Probe = async (client, signal, limit = 1) => found('GET /loads', (await listLoads(client, { skip: 0, limit }, signal)).items, limit);

export const STREAM_PROBES: Readonly<Record<StreamName, Probe | null>> = {
  loads: loadsProbe,
  invoices: async (client, signal, limit = 1) => {
    const { from, to } = recent(client, 30 * DAY_MS);
    return found('GET /invoices', (await listInvoices(client, { skip: 0, limit, billingFrom: from, billingTo: to }, signal)).items, limit);
  },
  bills: async (client, signal, limit = 1) => found('GET /bills', (await listBills(client, { skip: 0, limit }, signal)).items, limit),
  supportMoves: async (client, signal, limit = 1) => found('GET /support-move', (await listSupportMoves(client, { skip: 0, limit }, signal)).items, limit),
  loadAudits: async (client, signal, limit = 1) => {
    const { from, to } = recent(client, DAY_MS);
    return found('GET /audit/load', (await listLoadAudits(client, { createdAtFrom: from, createdAtTo: to, limit }, signal)).items, limit);
  },
  customerAudits: async (client, signal, limit = 1) => {
    const { from, to } = recent(client, DAY_MS);
    return found('GET /audit/customer', (await listCustomerAudits(client, { createdAtFrom: from, createdAtTo: to, limit }, signal)).items, limit);
  },
  customers: async (client, signal, limit = 1) => found('GET /customer/', (await listCustomers(client, { skip: 0, limit }, signal)).items, limit),
  consignees: async (client, signal, limit = 1) => found('GET /consignee/', (await listConsignees(client, { skip: 0, limit }, signal)).items, limit),
  webhookEvents: async (client, signal, limit = 1) => found('GET /webhook/', (await listWebhookEvents(client, { skip: 0, limit }, signal)).items, limit),
  chargeCodes: async (client, signal, limit = 1) => found('GET /get-charge-codes', (await listChargeCodes(client, signal)).items, limit),
  // Delivered as `{ name }` (src/sync/streams/reference-data.ts).
  loadDocumentTypes: async (client, signal, limit = 1) => found('GET /load-document-type', (await listLoadDocumentTypes(client, signal)).map((name) => ({ name })), limit),
  customerDiscounts: async (client, signal, limit = 1) => found('GET /customer-discount', (await listCustomerDiscounts(client, {}, signal)).items, limit),
  customerRates: async (client, signal, limit = 1) => found('GET /customer-rates', (await listCustomerRates(client, { skip: 0, limit }, signal)).items, limit),
  customerDynamicRates: async (client, signal, limit = 1) => found('GET /customer-dynamic-rates', dynamicRateRecords(await getCustomerDynamicRates(client, signal)), limit),
  events: null,
  loadDocuments: null,
  // Reads the loads' documents arrays (the files' hosts are only known from them).
  documentFiles: async (client, signal, limit = 1) => ({ ...(await loadsProbe(client, signal, limit)), streamRecords: false }),
};
