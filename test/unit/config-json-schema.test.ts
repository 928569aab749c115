import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildConfigJsonSchema } from '../../src/cli/actions/schema.js';
import { displayConfig } from '../../src/config/display-config.js';
import { loadConfig } from '../../src/config/load-config.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const EXAMPLES = ['config/freight-sync.example.yaml', 'config/freight-sync.brokerage.example.yaml', 'config/examples/sftp.yaml', 'config/examples/sql-postgres.yaml'];

/** `freight-sync schema`: the JSON Schema editors use must accept what freight-sync accepts and catch what it refuses. */
describe('JSON Schema of the config (freight-sync schema)', async () => {
  const schema = await buildConfigJsonSchema();
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const validate = ajv.compile(schema);
  const errorsOf = (config: unknown) => (validate(config) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
  const minimal = () => ({
    api: { variant: 'main', baseUrl: 'https://api.example.com/v1', auth: { clientId: 'a', clientSecret: 'b' } },
    connectors: { drop: { type: 'csv', options: { directory: './out' } } },
    sync: { streams: { loads: { sinks: ['drop'], safetyLag: 'PT2M', enabled: 'yes' } } },
  });

  it('is a valid draft 2020-12 schema and accepts every shipped example config as written (${VAR} included)', () => {
    expect(schema['$schema']).toContain('2020-12');
    for (const file of EXAMPLES) {
      const raw = parse(fs.readFileSync(path.join(repoRoot, file), 'utf8')) as unknown;
      expect(errorsOf(raw), file).toEqual([]);
    }
    expect(errorsOf(minimal())).toEqual([]);
  });

  it('accepts the effective config validate-config prints (it loads again unchanged)', async () => {
    const loaded = await loadConfig({
      cwd: repoRoot,
      configPath: 'config/freight-sync.example.yaml',
      env: { FREIGHT_CLIENT_ID: 'id', FREIGHT_CLIENT_SECRET: 'secret' },
    });
    expect(errorsOf(displayConfig(loaded.config))).toEqual([]);
  });

  it('catches what the loader refuses: unknown keys, bad durations and booleans, a connector option of the wrong type', () => {
    const unknownKey = { ...minimal(), extra: 1 };
    expect(errorsOf(unknownKey).join('\n')).toMatch(/additional properties/);
    const badDuration = minimal();
    badDuration.sync.streams.loads.safetyLag = 'two minutes';
    expect(errorsOf(badDuration).join('\n')).toMatch(/\/sync\/streams\/loads\/safetyLag/);
    const badBoolean = minimal();
    badBoolean.sync.streams.loads.enabled = 'maybe';
    expect(errorsOf(badBoolean).join('\n')).toMatch(/\/sync\/streams\/loads\/enabled/);
    const badOption = minimal() as { connectors: { drop: { type: string; options: Record<string, unknown> } } };
    badOption.connectors.drop.options['directori'] = './x';
    expect(errorsOf(badOption).join('\n')).toMatch(/\/connectors\/drop\/options/);
    const interpolated = minimal() as unknown as { sync: { streams: { loads: Record<string, unknown> } } };
    interpolated.sync.streams.loads['enabled'] = '${LOADS_ON:-true}';
    expect(errorsOf(interpolated)).toEqual([]);
  });

  it('carries the meaning of keys from the reference table, for streams and connectors by their generic row', () => {
    const props = schema['properties'] as Record<string, any>;
    expect(props['api'].properties.timeout.description).toMatch(/Per-request timeout/);
    expect(props['api'].properties.timeout.description).toMatch(/default: PT30S/);
    expect(props['sync'].properties.streams.properties.invoices.properties.sinks.description).toBeTruthy();
    expect(props['connectors'].additionalProperties.properties.type.description).toMatch(/Built-in type/);
  });
});
