import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { csvOptionsSchema } from '../../connectors/csv/options.js';
import { encodeCsv, latin1Check } from '../../connectors/file-drop/encode-csv.js';
import { encodeRow } from '../../connectors/sql/encode-row.js';
import { planStream } from '../../connectors/sql/table-plan.js';
import type { SyncRecord } from '../../src/contracts/index.js';
import { createStreamMapper, loadMapping, parseMapping, type StreamMapping } from '../../src/mapping/index.js';
import { Prng } from '../../src/simulator/prng.js';
import { contentHash } from '../../src/sync/content-hash.js';
import { fixture } from '../helpers/records.js';

/**
 * What the default loads mappings (and a mapping with zones and formats) make of tricky loads —
 * dates with offsets, fractional seconds, invalid and odd dates, nulls, decimals, text that needs
 * quoting — as CSV bytes (default and latin1 formats), SQL-bound rows per dialect, mapping errors
 * and content hashes. Pinned by digest: the expected digests were written by main's code before
 * the CPU work of issue 14 (ISO fast path, byte CSV encoder, serialise once), so any change in
 * output fails here. `FREIGHT_SYNC_WRITE_GOLDEN=1` writes the digests instead (only on purpose).
 */
const GOLDEN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'mapping-golden', 'loads-tricky.sha256.json');

const DATES = [
  '2024-05-01T13:45:10.123Z', '2024-05-01T13:45:10Z', '2024-05-01T13:45:10.1Z', '2024-05-01T13:45:10.123456789Z', '2024-05-01T13:45:10.999999+05:30',
  '2024-05-01T23:30:00-08:00', '2024-05-01', '2024-05-01T13:45', '2024-02-29T00:00:00.000Z', '2023-02-29T00:00:00.000Z', '2024-05-01T24:00:00Z',
  'Tue, 12 Mar 2024 15:04:05 GMT', '2024-05-01 13:45:10', 'not a date', '', null, 1714571110123, '0999-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z',
  '  2024-05-01T13:45:10.123Z  ', '2024-05-01T13:45:10.123z', '2024-W18-3', '2024-05-01T13:45:10.123Z[Europe/Paris]', '2024-13-01T00:00:00.000Z',
];
const VERSIONS = ['2024-05-01T13:45:10.123Z', '2024-05-01T13:45:10.999999+05:30', '2024-05-01', '2024-03-12T15:04:05.000Z'];
const DECIMALS = ['12.345', '12.344999', '-0', '-0.005', '', null, 0, 1e21, 19.99, '1e3', '+3.10', 'abc', 123456789.125, '0.1'];
const TEXTS = ['plain', 'a,b', 'say "hi"', 'line\nbreak', 'cr\rhere', '=SUM(A1)', '-12.50', '+1', '@x', 'Ünïcode 日本 🚚', '', null, '\t tab', "'quoted'"];
const BOOLEANS = [true, false, 'yes', 'no', 'true', 0, 1, '', null, 'maybe'];

function trickyLoads(): SyncRecord[] {
  const prng = new Prng(14);
  const base = { ...fixture('load-main'), ...fixture('load-brokerage') };
  return Array.from({ length: 60 }, (_, i) => {
    const d = structuredClone(base) as Record<string, any>;
    d.reference_number = `M${String(i).padStart(4, '0')}`;
    d._id = `id${i}`;
    for (const f of ['lastFreeDay', 'dischargedDate', 'outgateDate', 'emptyDay', 'createdAt', 'lastUpdatedStatusAt']) if (prng.chance(0.3)) d[f] = prng.pick(DATES);
    if (prng.chance(0.3)) d.updatedAt = prng.pick(VERSIONS);
    if (prng.chance(0.3)) d.vessel = prng.pick([null, {}, { eta: prng.pick(DATES) }]);
    for (const f of ['totalAmount', 'paidAmount', 'remainAmount', 'taxRate', 'distance', 'weight', 'totalMiles']) if (prng.chance(0.2)) d[f] = prng.pick(DECIMALS);
    for (const f of ['callerName', 'shipperName', 'consigneeName', 'containerNo', 'status', 'driverName']) if (prng.chance(0.2)) d[f] = prng.pick(TEXTS);
    for (const f of ['hazmat', 'hot', 'overWeight', 'isDeleted']) if (prng.chance(0.15)) d[f] = prng.pick(BOOLEANS);
    if (prng.chance(0.2)) d.caller = prng.pick([null, 'c-123', { _id: 'c9' }, [{ _id: 'a' }, { _id: 'b' }]]);
    if (prng.chance(0.2)) d.shipper = prng.pick([null, ['s1', 's2'], [{ _id: 'x', company_name: 'X "Co"' }], { _id: 'y' }]);
    for (const stops of [d.driverOrder, d.routingOrder]) {
      if (!Array.isArray(stops)) continue;
      for (const stop of stops) {
        if (prng.chance(0.2)) stop.company_name = prng.pick(TEXTS);
        if (prng.chance(0.2) && stop.address) stop.address.lat = prng.pick(DECIMALS);
        if (prng.chance(0.1)) stop.isVoidOut = prng.pick(BOOLEANS);
      }
    }
    if (prng.chance(0.1)) d.driverOrder = prng.pick([null, [], 'not a list']);
    return { stream: 'loads', key: d.reference_number, op: prng.chance(0.1) ? 'delete' : 'upsert', updatedAt: String(d.updatedAt), data: d, syncedAt: '2024-06-02T00:00:00.000Z' };
  });
}

/** Zones and formats the default mappings do not use. */
const ZONED = {
  table: 'zoned',
  key: ['record_key'],
  columns: [
    { name: 'record_key', path: '$key' },
    ...['createdAt', 'lastFreeDay', 'dischargedDate'].flatMap((p) => [
      { name: `${p}_ny`, path: p, transform: { type: 'date', timeZone: 'America/New_York' } },
      { name: `${p}_kolkata`, path: p, transform: { type: 'date', timeZone: 'Asia/Kolkata', format: 'yyyy-MM-dd HH:mm:ss.SSS ZZ' } },
      { name: `${p}_date`, path: p, transform: { type: 'date', format: 'isoDate' } },
      { name: `${p}_millis`, path: p, transform: { type: 'date', format: 'epochMillis' } },
      { name: `${p}_utc`, path: p, transform: { type: 'date', format: 'dd.MM.yyyy HH:mm' } },
    ]),
    { name: 'amount', path: 'totalAmount', transform: { type: 'number', decimals: 2, fixed: true } },
    { name: 'amount_exact', path: 'totalAmount', transform: { type: 'decimal', scale: 3, round: 'half-even' } },
  ],
};

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

/** Every output of one mapping over the loads, as digests by name. */
function outputs(mapping: StreamMapping, records: readonly SyncRecord[]): Record<string, string> {
  const mapper = createStreamMapper(mapping);
  const csv = csvOptionsSchema.parse({ directory: 'x' });
  const latin1 = { ...csv, encoding: 'latin1' as const, quoted: 'all' as const, lineEnding: 'lf' as const, delimiter: ';' };
  const parts = new Map<string, (string | Buffer)[]>();
  const add = (name: string, value: string | Buffer) => parts.set(name, [...(parts.get(name) ?? []), value]);
  // Fresh objects, hashed first as the engine does (the mapper then reuses each record's JSON for _raw).
  const fresh = JSON.parse(JSON.stringify(records)) as SyncRecord[];
  for (const r of fresh) add('hashes', contentHash(r.op, r.data));
  for (let b = 0; b < fresh.length; b += 20) {
    const batch = { stream: 'loads', batchId: `b${b}`, records: fresh.slice(b, b + 20) };
    const { batch: mapped, errors } = mapper.map(batch);
    for (const e of errors) for (const x of e.errors) add('errors', `${x.key} ${x.table}.${x.column}: ${x.message}`);
    for (const t of mapped.tables) add(`csv ${t.table}`, encodeCsv(t.columns, t.rows, { ...csv, header: b === 0 }));
    for (const t of mapper.map(batch, { checkText: latin1Check }).batch.tables) add(`csv latin1 ${t.table}`, encodeCsv(t.columns, t.rows, { ...latin1, header: b === 0 }));
    for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
      const plan = planStream(mapping, { dialect, tablePrefix: '', textLength: 255 });
      for (const table of [plan.root, ...plan.children]) {
        for (const row of mapped.tables.find((t) => t.table === table.logical)?.rows ?? []) add(`${dialect} ${table.name}`, JSON.stringify(encodeRow(row, table, dialect, row._op === 'delete' ? 'delete' : 'upsert')));
      }
    }
  }
  return Object.fromEntries([...parts].map(([name, values]) => [`${name} (${values.length})`, sha(Buffer.concat(values.map((v) => Buffer.from(v))))]));
}

describe('mapped output of the default loads mappings: unchanged by the CPU work', () => {
  it('CSV bytes, SQL rows, mapping errors and content hashes equal the digests written by main', async () => {
    const records = trickyLoads();
    const actual: Record<string, Record<string, string>> = {
      'loads main': outputs(await loadMapping('loads', undefined, { baseDir: '.', variant: 'main' }), records),
      'loads brokerage': outputs(await loadMapping('loads', undefined, { baseDir: '.', variant: 'brokerage' }), records),
      zoned: outputs(parseMapping('loads', ZONED), records),
    };
    if (process.env.FREIGHT_SYNC_WRITE_GOLDEN === '1') writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 2)}\n`);
    expect(existsSync(GOLDEN)).toBe(true);
    expect(actual).toEqual(JSON.parse(readFileSync(GOLDEN, 'utf8')));
    // The inputs did reach the odd corners: refused records, and every table written.
    expect(Object.keys(actual['loads main']!).some((k) => k.startsWith('errors ('))).toBe(true);
    expect(Object.keys(actual['loads main']!).filter((k) => k.startsWith('csv load_stops')).length).toBe(1);
  });
});
