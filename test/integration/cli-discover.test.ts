import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { DiscoveredStream } from '../../src/app/discover.js';
import type { StreamSample } from '../../src/app/discover-sample.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { pullConfigRaw, startSim, tempDir } from '../helpers/pull-harness.js';

/**
 * `freight-sync discover` (issue 13): the streams of each variant with key, cursor and the columns
 * of their default mapping, without a config; `--sample N` against the simulator with the
 * config's credentials, records shown mapped with each sink's mapping.
 */
const MAPPINGS = path.resolve(import.meta.dirname, '../../config/mappings');
const mappingColumns = (stream: string) => (parse(fs.readFileSync(path.join(MAPPINGS, `${stream}.yaml`), 'utf8')) as { columns: Array<{ name: string }> }).columns.map((c) => c.name);

describe('freight-sync discover (no config, no API)', () => {
  it('lists each variant\'s streams with key, cursor and the default mapping\'s tables and typed columns', async () => {
    const result = await runCliInProcess(['discover', '--json']);
    expect(result.code).toBe(0);
    const streams = JSON.parse(result.stdout) as DiscoveredStream[];
    const find = (variant: string, stream: string) => streams.find((s) => s.variant === variant && s.stream === stream);

    const loadsMain = find('main', 'loads')!;
    expect(loadsMain).toMatchObject({ key: 'reference_number', cursor: 'updatedAt keyset', pushOnly: false });
    expect(find('brokerage', 'loads')!.cursor).toBe('day windows');
    expect(loadsMain.tables.map((t) => t.table)).toEqual(['loads', 'load_stops']);
    const loadsTable = loadsMain.tables[0]!;
    // Every column of config/mappings/loads.yaml, in order, then _raw.
    expect(loadsTable.columns.map((c) => c.name)).toEqual([...mappingColumns('loads'), '_raw']);
    const column = (name: string) => loadsTable.columns.find((c) => c.name === name);
    expect(column('total_amount')).toMatchObject({ type: 'decimal, 2 decimals', source: 'totalAmount' });
    expect(column('hazmat')!.type).toBe('boolean');
    expect(column('created_at')!.type).toBe('timestamp');
    expect(column('distance')!.type).toBe('double');
    expect(column('record_key')).toMatchObject({ key: true, source: '$key' });
    expect(column('_raw')!.type).toBe('json');
    // Child tables: parent key copied from the parent, the variant's own columns.
    const stops = loadsMain.tables[1]!;
    expect(stops).toMatchObject({ parent: 'loads', path: 'driverOrder', key: ['record_key', 'stop_no'] });
    expect(stops.columns[0]).toMatchObject({ name: 'record_key', type: 'text', source: 'loads.record_key' });
    expect(stops.columns.find((c) => c.name === 'stop_no')!.type).toBe('integer');
    expect(find('brokerage', 'loads')!.tables[1]!.path).toBe('routingOrder');
    expect(find('brokerage', 'loads')!.tables[1]!.columns.map((c) => c.name)).toContain('is_bobtail');

    // Main-only streams are listed for main only; push-only streams say so.
    expect(find('main', 'bills')).toBeDefined();
    expect(find('brokerage', 'bills')).toBeUndefined();
    expect(find('main', 'events')).toMatchObject({ pushOnly: true, cursor: 'webhook push', key: 'event_key' });
  });

  it('--variant, --stream and the text forms', async () => {
    const list = await runCliInProcess(['discover', '--variant', 'brokerage']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^brokerage \(12 streams\)/);
    expect(list.stdout).toMatch(/loads\s+reference_number\s+day windows\s+loads \(\d+\), load_stops \(\d+\)/);
    expect(list.stdout).not.toMatch(/^bills /m);

    const columns = await runCliInProcess(['discover', '--variant', 'main', '--stream', 'customers']);
    expect(columns.code).toBe(0);
    expect(columns.stdout).toMatch(/customers on main: Customers/);
    expect(columns.stdout).toMatch(/credit_limit\s+decimal, 2 decimals\s+credit_limit/);
    expect(columns.stdout).toMatch(/payment_terms\s+integer\s+payment_terms \(else defaultPaymentTerms\.days\)/);

    expect((await runCliInProcess(['discover', '--stream', 'lods'])).code).toBe(2);
    expect((await runCliInProcess(['discover', '--variant', 'sideways'])).code).toBe(2);
    expect((await runCliInProcess(['discover', '--raw'])).code).toBe(2);
  });
});

describe('freight-sync discover --sample (simulator)', () => {
  let sim: SimulatorHandle;
  let dir: string;
  let configFile: string;
  beforeAll(async () => {
    sim = await startSim({ variant: 'main', loads: 20, customers: 5, bills: 5 });
    dir = tempDir('cli-discover');
    configFile = path.join(dir, 'freight-sync.yaml');
    const raw = pullConfigRaw({ sim, dir, streams: ['loads', 'customers'] });
    // A second sink with its own loads mapping (and a field it keeps out of `_raw`).
    (raw.connectors as Record<string, unknown>).mine = {
      type: 'csv',
      options: { directory: path.join(dir, 'mine') },
      mappings: { loads: { table: 'my_loads', key: ['ref'], rawOmit: ['containerNo'], includeRaw: true, columns: [{ name: 'ref', path: 'reference_number' }, { name: 'status', path: 'status' }] } },
    };
    ((raw.sync as Record<string, any>).streams.loads.sinks as string[]).push('mine');
    fs.writeFileSync(configFile, stringify(raw));
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('fetches N records per configured stream and maps them with each sink\'s mapping', async () => {
    const before = sim.stats().requests;
    const result = await runCliInProcess(['discover', '--sample', '2', '--json', '-c', configFile]);
    expect(result.code).toBe(0);
    const samples = JSON.parse(result.stdout) as StreamSample[];
    expect(samples.map((s) => s.stream)).toEqual(['loads', 'customers']);
    const loads = samples[0]!;
    expect(loads).toMatchObject({ endpoint: 'GET /loads', error: null });
    expect(loads.records).toHaveLength(2);
    const [first] = loads.records;
    expect(first!.key).toBe(first!.raw.reference_number);
    // The load has a container number (the default mapping shows it), but `mine` keeps it out of `_raw`.
    expect(first!.mapped[0]!.tables[0]!.rows[0]!.container_no).toEqual(expect.any(String));
    expect(first!.raw).not.toHaveProperty('containerNo');
    expect(first!.mapped.map((m) => m.mapping)).toEqual(['connector out', 'connector mine']);
    const byDefault = first!.mapped[0]!;
    expect(byDefault.errors).toEqual([]);
    expect(byDefault.tables.map((t) => t.table)).toEqual(['loads', 'load_stops']);
    expect(byDefault.tables[0]!.rows[0]).toMatchObject({ record_key: first!.key, reference_number: first!.key });
    expect(first!.mapped[1]!.tables[0]).toMatchObject({ table: 'my_loads', rows: [expect.objectContaining({ ref: first!.key, status: first!.raw.status })] });
    expect(samples[1]!.records).toHaveLength(2);
    // One call per stream (plus the token), nothing more.
    expect(sim.stats().requests - before).toBeLessThanOrEqual(3);
    // Nothing was delivered: no sink folder was written.
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
  });

  it('samples a stream the config does not enable with the default mapping; text output shows rows and --raw the JSON', async () => {
    const result = await runCliInProcess(['discover', '--sample', '1', '--stream', 'bills', '--raw', '-c', configFile]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^bills: 1 record from GET \/bills/);
    expect(result.stdout).toMatch(/default mapping → bills\n/);
    expect(result.stdout).toMatch(/record_key\s+\S+/);
    expect(result.stdout).toMatch(/"billId":/);
  });

  it('refuses bad usage with exit 2; a stream without an endpoint says so', async () => {
    expect((await runCliInProcess(['discover', '--sample', '0', '-c', configFile])).code).toBe(2);
    expect((await runCliInProcess(['discover', '--sample', '1', '--variant', 'brokerage', '-c', configFile])).code).toBe(2);
    expect((await runCliInProcess(['discover', '--sample', '1', '-c', path.join(dir, 'missing.yaml')])).code).toBe(2);
    const events = await runCliInProcess(['discover', '--sample', '1', '--stream', 'events', '--json', '-c', configFile]);
    expect(events.code).toBe(0);
    expect(JSON.parse(events.stdout)).toEqual([expect.objectContaining({ stream: 'events', note: expect.stringMatching(/webhook receiver/), records: [] })]);
  });

  it('exits 1 naming the stream when the API refuses the call', async () => {
    const wrong = path.join(dir, 'wrong-secret.yaml');
    const raw = parse(fs.readFileSync(configFile, 'utf8')) as Record<string, any>;
    raw.api.auth.clientSecret = 'wrong-secret';
    raw.api.retry = { maxAttempts: 1 };
    raw.state = { path: path.join(dir, 'wrong.sqlite') };
    fs.writeFileSync(wrong, stringify(raw));
    const result = await runCliInProcess(['discover', '--sample', '1', '--stream', 'loads', '-c', wrong]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^loads: FAILED: .+/);
  });
});

describe('freight-sync discover --sample (brokerage simulator)', () => {
  it('maps with the brokerage variant of the default mapping (routing events, brokerage-only columns)', async () => {
    const sim = await startSim({ variant: 'brokerage', loads: 10 });
    try {
      const dir = tempDir('cli-discover-brokerage');
      const configFile = path.join(dir, 'freight-sync.yaml');
      fs.writeFileSync(configFile, stringify(pullConfigRaw({ sim, dir, streams: ['loads'] })));
      const result = await runCliInProcess(['discover', '--sample', '3', '--json', '-c', configFile]);
      expect(result.code).toBe(0);
      const [loads] = JSON.parse(result.stdout) as StreamSample[];
      expect(loads!.records).toHaveLength(3);
      const withStops = loads!.records.find((r) => Array.isArray(r.raw.routingOrder) && (r.raw.routingOrder as unknown[]).length > 0);
      expect(withStops, 'a sampled brokerage load with routing events').toBeDefined();
      const stops = withStops!.mapped[0]!.tables.find((t) => t.table === 'load_stops')!;
      expect(stops.rows).toHaveLength((withStops!.raw.routingOrder as unknown[]).length);
      expect(Object.keys(stops.rows[0]!)).toContain('is_bobtail');
    } finally {
      await sim.close();
    }
  });
});
