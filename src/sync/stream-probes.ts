import type { ApiClient } from '../api/api-client.js';
import { listBills } from '../api/endpoints/bills.js';
import { listConsignees } from '../api/endpoints/consignees.js';
import { getCustomerDynamicRates, listCustomerAudits, listCustomerDiscounts, listCustomerRates, listCustomers } from '../api/endpoints/customers.js';
import { listInvoices } from '../api/endpoints/invoices.js';
import { listChargeCodes, listLoadAudits, listLoadDocumentTypes, listLoads } from '../api/endpoints/loads.js';
import { listSupportMoves } from '../api/endpoints/support-moves.js';
import { listWebhookEvents } from '../api/endpoints/webhook-events.js';
import type { StreamName } from '../config/stream-names.js';

/** What a probe learned: the endpoint it called and how many records the answer held. */
export interface ProbeResult {
  endpoint: string;
  records: number;
}

type Probe = (client: ApiClient, signal: AbortSignal) => Promise<ProbeResult>;

const DAY_MS = 86_400_000;
const recent = (client: ApiClient, spanMs: number) => {
  const to = client.clock.now();
  return { from: new Date(to.getTime() - spanMs).toISOString(), to: to.toISOString() };
};

/**
 * One cheap call per stream (`freight-sync check`): the endpoint the stream reads, one record at
 * most, so permissions and variant support are proven without a sync. Streams that read no
 * endpoint of their own (events and load documents come from the webhook inbox) have none.
 */
const loadsProbe: Probe = async (client, signal) => ({ endpoint: 'GET /loads', records: (await listLoads(client, { skip: 0, limit: 1 }, signal)).items.length });

export const STREAM_PROBES: Readonly<Record<StreamName, Probe | null>> = {
  loads: loadsProbe,
  invoices: async (client, signal) => {
    const { from, to } = recent(client, 30 * DAY_MS);
    const page = await listInvoices(client, { skip: 0, limit: 1, billingFrom: from, billingTo: to }, signal);
    return { endpoint: 'GET /invoices', records: page.items.length };
  },
  bills: async (client, signal) => ({ endpoint: 'GET /bills', records: (await listBills(client, { skip: 0, limit: 1 }, signal)).items.length }),
  supportMoves: async (client, signal) => ({ endpoint: 'GET /support-move', records: (await listSupportMoves(client, { skip: 0, limit: 1 }, signal)).items.length }),
  loadAudits: async (client, signal) => {
    const { from, to } = recent(client, DAY_MS);
    return { endpoint: 'GET /audit/load', records: (await listLoadAudits(client, { createdAtFrom: from, createdAtTo: to, limit: 1 }, signal)).items.length };
  },
  customerAudits: async (client, signal) => {
    const { from, to } = recent(client, DAY_MS);
    return { endpoint: 'GET /audit/customer', records: (await listCustomerAudits(client, { createdAtFrom: from, createdAtTo: to, limit: 1 }, signal)).items.length };
  },
  customers: async (client, signal) => ({ endpoint: 'GET /customer/', records: (await listCustomers(client, { skip: 0, limit: 1 }, signal)).items.length }),
  consignees: async (client, signal) => ({ endpoint: 'GET /consignee/', records: (await listConsignees(client, { skip: 0, limit: 1 }, signal)).items.length }),
  webhookEvents: async (client, signal) => ({ endpoint: 'GET /webhook/', records: (await listWebhookEvents(client, { skip: 0, limit: 1 }, signal)).items.length }),
  chargeCodes: async (client, signal) => ({ endpoint: 'GET /get-charge-codes', records: (await listChargeCodes(client, signal)).items.length }),
  loadDocumentTypes: async (client, signal) => ({ endpoint: 'GET /load-document-type', records: (await listLoadDocumentTypes(client, signal)).length }),
  customerDiscounts: async (client, signal) => ({ endpoint: 'GET /customer-discount', records: (await listCustomerDiscounts(client, {}, signal)).items.length }),
  customerRates: async (client, signal) => ({ endpoint: 'GET /customer-rates', records: (await listCustomerRates(client, { skip: 0, limit: 1 }, signal)).items.length }),
  customerDynamicRates: async (client, signal) => ({ endpoint: 'GET /customer-dynamic-rates', records: (await getCustomerDynamicRates(client, signal)).rules.length }),
  events: null,
  loadDocuments: null,
  // Reads the loads' documents arrays (the files' hosts are only known from them).
  documentFiles: loadsProbe,
};
