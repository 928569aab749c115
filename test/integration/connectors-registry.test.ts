import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { createConnectors } from '../../src/plugins/create-connectors.js';
import { loadConnectorModule, ConnectorModuleError } from '../../src/plugins/load-connector-module.js';
import { getBuiltInConnector } from '../../src/plugins/registry.js';
import { ConfigError } from '../../src/util/errors.js';
import { silentLogger } from '../../src/util/logger.js';
import { batchOf, record } from '../helpers/records.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('connector registry and loading', () => {
  it('knows the csv built-in', async () => {
    expect((await getBuiltInConnector('csv'))?.name).toBe('csv');
    expect(await getBuiltInConnector('nope')).toBeUndefined();
  });

  it('loads the example console sink, which receives a batch', async () => {
    const set = await createConnectors(
      { console: { module: './examples/connectors/console-sink.js', options: { prefix: '[t]' } } },
      { baseDir: repoRoot, logger: silentLogger() },
    );
    const handle = set.get('console')!;
    expect(handle.factory.name).toBe('console-sink');
    expect(handle.mappings.get('loads')?.root.table).toBe('loads');
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      await handle.instance.sink!.write(batchOf('loads', 'b1', [record('loads', 'M1', { reference_number: 'M1' })]), new AbortController().signal);
      expect(out).toHaveBeenCalledWith('[t] loads upsert M1\n');
    } finally {
      out.mockRestore();
    }
    expect((handle.instance as unknown as { received: unknown[] }).received).toHaveLength(1);
    await set.close();
  });

  it('names the module path when it is not a connector factory', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'connector-module-'));
    await writeFile(path.join(dir, 'bad.js'), 'export default { name: "bad", create() {} };\n');
    const error = await loadConnectorModule('./bad.js', dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectorModuleError);
    expect((error as Error).message).toBe(`connector module ${path.join(dir, 'bad.js')}: default export is not a ConnectorFactory: "configSchema" must be a zod schema (with safeParse)`);
    await expect(loadConnectorModule('./missing.js', dir)).rejects.toThrow(`cannot load connector module ${path.join(dir, 'missing.js')}`);
  });

  it('reports every options and mapping problem with its config path before starting anything', async () => {
    const error = await createConnectors(
      {
        erp: { type: 'csv', options: { directory: 'out', delimeter: ';' }, mappings: { loads: { table: 'loads', key: ['id'], columns: [{ name: 'id', path: 'id', transform: { type: 'upper' } }] }, lodas: {} } },
        other: { type: 'ftp' },
      },
      { baseDir: repoRoot, logger: silentLogger() },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const text = (error as ConfigError).issues.join('\n');
    expect(text).toContain('connectors.erp.options.delimeter: unknown key');
    expect(text).toMatch(/connectors\.erp\.mappings\.loads\.columns\[0\]\.transform\.type: /);
    expect(text).toContain('connectors.erp.mappings.lodas: connector erp does not receive stream "lodas"');
    expect(text).toContain('connectors.other.type: unknown connector type "ftp"');
  });

  it('inits in order, closes in reverse, and closes started ones when a later init fails', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'connector-order-'));
    const source = (name: string, failInit: boolean) => `
      import { z } from 'zod';
      globalThis.__events ??= [];
      export const connector = { name: '${name}', configSchema: z.object({}).strict(), create() { return {
        async init() { globalThis.__events.push('init ${name}'); ${failInit ? "throw new Error('boom');" : ''} },
        async close() { globalThis.__events.push('close ${name}'); } }; } };`;
    await writeFile(path.join(dir, 'a.js'), source('a', false));
    await writeFile(path.join(dir, 'b.js'), source('b', false));
    await writeFile(path.join(dir, 'c.js'), source('c', true));
    const events = ((globalThis as unknown as { __events: string[] }).__events = []);
    const set = await createConnectors({ a: { module: './a.js' }, b: { module: './b.js' } }, { baseDir: dir, logger: silentLogger(), streamsFor: () => [] });
    await set.close();
    expect(events).toEqual(['init a', 'init b', 'close b', 'close a']);
    events.length = 0;
    await expect(createConnectors({ a: { module: './a.js' }, b: { module: './b.js' }, c: { module: './c.js' } }, { baseDir: dir, logger: silentLogger(), streamsFor: () => [] })).rejects.toThrow('connector c failed to start: boom');
    expect(events).toEqual(['init a', 'init b', 'init c', 'close c', 'close b', 'close a']);
  });
});
