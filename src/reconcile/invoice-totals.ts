import Big from 'big.js';
import type { SinkRow } from '../contracts/index.js';
import type { InvoiceTotal } from './report.js';
import type { MappedView } from './mapped-view.js';

interface Sums {
  count: number;
  total: Big;
  paid: Big;
}

const ZERO = new Big(0);

/**
 * Invoice totals and paid amounts per customer and billing month, on the API side and the sink
 * side, summed with big.js from the text both sides hold (never through a float), so a cent of
 * difference shows. The columns are found in the sink's own mapping; without a total and a
 * billing-date column there is nothing to sum (`available` is false).
 */
export class InvoiceTotals {
  private readonly total: string | undefined;
  private readonly paid: string | undefined;
  private readonly customer: string | undefined;
  private readonly billing: string | undefined;
  private readonly api = new Map<string, Sums>();
  private readonly sink = new Map<string, Sums>();
  /** Cells that were not a number (counted, not summed). */
  unparseable = 0;

  constructor(view: MappedView) {
    this.total = view.column(['totalAmount'], ['total_amount']);
    this.paid = view.column(['paidAmount'], ['paid_amount']);
    this.customer = view.column(['caller.company_name', 'customerDetails.company_name', 'callerName', 'caller._id'], ['caller_name', 'customer_name', 'customer_details_name']);
    this.billing = view.column(['billingDate'], ['billing_date']);
  }

  get available(): boolean {
    return this.total !== undefined && this.billing !== undefined;
  }

  addApi(cells: SinkRow): void {
    this.add(this.api, cells);
  }

  addSink(cells: SinkRow): void {
    this.add(this.sink, cells);
  }

  result(): InvoiceTotal[] {
    const groups = [...new Set([...this.api.keys(), ...this.sink.keys()])].sort();
    return groups.map((group) => {
      const [month, customer] = JSON.parse(group) as [string, string];
      const api = this.api.get(group);
      const sink = this.sink.get(group);
      return {
        customer,
        month,
        apiInvoices: api?.count ?? 0,
        sinkInvoices: sink?.count ?? 0,
        apiTotal: (api?.total ?? ZERO).toFixed(),
        sinkTotal: (sink?.total ?? ZERO).toFixed(),
        apiPaid: (api?.paid ?? ZERO).toFixed(),
        sinkPaid: (sink?.paid ?? ZERO).toFixed(),
      };
    });
  }

  private add(into: Map<string, Sums>, cells: SinkRow): void {
    if (!this.available) return;
    const month = (cells[this.billing!] ?? '').slice(0, 7) || '(none)';
    const customer = (this.customer ? cells[this.customer] : null) ?? '(none)';
    const group = JSON.stringify([month, customer]);
    const sums = into.get(group) ?? { count: 0, total: ZERO, paid: ZERO };
    sums.count += 1;
    sums.total = sums.total.plus(this.amount(cells[this.total!]));
    if (this.paid) sums.paid = sums.paid.plus(this.amount(cells[this.paid]));
    into.set(group, sums);
  }

  private amount(text: string | null | undefined): Big {
    if (text === null || text === undefined) return ZERO;
    try {
      return new Big(text);
    } catch {
      this.unparseable += 1;
      return ZERO;
    }
  }
}
