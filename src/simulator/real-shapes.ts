/**
 * The `realShapes` switch: reshapes what the simulator sends into the shapes real API output has
 * been seen in (a public dump of `GET /loads`, a PortPro→Sage integration's field list, webhook
 * reports), while the store keeps the spec's neat shape and stays the truth tests compare with.
 * Applied to responses and outgoing webhook bodies only, never to stored records, so every
 * generator and mutator is unaware of it.
 *
 * - Invoices: `status`, the amounts, `billingDate`, `caller`/`callerName` only inside the
 *   `invoice[]` entries; amounts as bare numbers (pricing too); the whole payment sits on the first
 *   entry, so its `remainAmount` goes negative when the payment exceeds that entry.
 * - Loads: money as decimal strings; `shipper` as one embedded object, `consignee` as a list of
 *   embedded objects (the spec has arrays of ids).
 * - Webhook bodies: `event_type` instead of `eventType`; the event log's `response.data` holds the
 *   body as it was sent.
 */
type Rec = Record<string, unknown>;

const HEADER_FIELDS_IN_ENTRIES = ['status', 'totalAmount', 'paidAmount', 'remainAmount', 'billingDate', 'caller', 'callerName'] as const;
const LOAD_MONEY = ['totalAmount', 'paidAmount', 'remainAmount'] as const;

const isRec = (value: unknown): value is Rec => typeof value === 'object' && value !== null && !Array.isArray(value);
const cents = (value: unknown): number => Math.round(Number(value) * 100);

/** Reshapes a route's `data` (a record or a list of records); routes not listed pass through. */
export function reshapeResponse(route: string, data: unknown): unknown {
  const each = (shape: (record: Rec) => Rec) => (Array.isArray(data) ? data.map((item) => (isRec(item) ? shape(item) : item)) : isRec(data) ? shape(data) : data);
  switch (route) {
    case 'GET /invoices':
    case 'GET /invoices/:ref':
      return each(realInvoice);
    case 'GET /loads':
    case 'GET /loads/:ref':
      return each(realLoad);
    case 'GET /webhook':
    case 'GET /webhook/:id':
      return each(sentBodyInLog);
    default:
      return data;
  }
}

/** A webhook body as some senders deliver it: `event_type`, and invoices in their real shape. */
export function reshapeWebhookBody(body: unknown): unknown {
  if (!isRec(body)) return body;
  const { eventType, ...rest } = body;
  const out: Rec = eventType === undefined ? rest : { event_type: eventType, ...rest };
  if (isRec(out['data'])) {
    const inner = out['data'];
    out['data'] = Array.isArray(inner['invoice']) ? realInvoice(inner) : renameEventType(inner);
  }
  return out;
}

/**
 * An event record's `response.data` is the body that was sent (§6.2): the reshaped one. The
 * record's own `data` stays in the spec's shape, as the log keeps it.
 */
function sentBodyInLog(record: Rec): Rec {
  const response = record['response'];
  if (!isRec(response) || typeof response['data'] !== 'string') return record;
  return { ...record, response: { ...response, data: JSON.stringify(reshapeWebhookBody(JSON.parse(response['data']))) } };
}

function renameEventType(record: Rec): Rec {
  if (!('eventType' in record)) return record;
  const { eventType, ...rest } = record;
  return { event_type: eventType, ...rest };
}

export function realInvoice(invoice: Rec): Rec {
  if (!Array.isArray(invoice['invoice']) || invoice['invoice'].length === 0) return invoice;
  const header: Rec = { ...invoice };
  for (const field of HEADER_FIELDS_IN_ENTRIES) delete header[field];
  const paid = cents(invoice['paidAmount'] ?? 0);
  const entries = (invoice['invoice'] as unknown[]).map((item, i): unknown => {
    if (!isRec(item)) return item;
    const entry: Rec = { ...item, status: invoice['status'], billingDate: invoice['billingDate'] };
    if (invoice['caller'] !== undefined) entry['caller'] = invoice['caller'];
    const total = cents(item['totalAmount'] ?? 0);
    const entryPaid = i === 0 ? paid : 0;
    entry['totalAmount'] = total / 100;
    entry['paidAmount'] = entryPaid / 100;
    entry['remainAmount'] = (total - entryPaid) / 100;
    if (Array.isArray(item['pricing'])) entry['pricing'] = item['pricing'].map((line) => (isRec(line) ? numericMoney(line) : line));
    return entry;
  });
  header['invoice'] = entries;
  return header;
}

function numericMoney(line: Rec): Rec {
  const out: Rec = { ...line };
  for (const field of ['amount', 'finalAmount']) {
    const value = line[field];
    if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) out[field] = Number(value);
  }
  return out;
}

function realLoad(load: Rec): Rec {
  const out: Rec = { ...load };
  for (const field of LOAD_MONEY) {
    const value = load[field];
    if (typeof value === 'number') out[field] = value.toFixed(2);
  }
  const embed = (id: unknown, name: unknown): unknown => (typeof id === 'string' ? { _id: id, company_name: name ?? null } : id);
  if (Array.isArray(load['shipper']) && load['shipper'].length === 1) out['shipper'] = embed(load['shipper'][0], load['shipperName']);
  if (Array.isArray(load['consignee'])) out['consignee'] = load['consignee'].map((id) => embed(id, load['consigneeName']));
  return out;
}
