import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inboxConnector, localInboxOptionsSchema } from '../../connectors/inbox/index.js';
import { getBuiltInConnector } from '../../src/plugins/registry.js';
import { silentLogger } from '../../src/util/logger.js';
import { inboxContract } from '../helpers/inbox-contract.js';

async function setup() {
  const baseDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-connector-'));
  const options = localInboxOptionsSchema.parse({ dir: 'in', pattern: ['*.csv', '*.json', '*.jsonl'] });
  const instance = await inboxConnector.create(options, { instanceName: 'erp_inbox', logger: silentLogger(), baseDir, mappings: new Map() });
  await instance.init?.(new AbortController().signal);
  return { source: instance.source!, dir: path.join(baseDir, 'in') };
}

describe('local inbox connector (type: inbox)', () => {
  inboxContract(setup);

  it('is registered as a built-in source-only connector with strict options', async () => {
    const factory = await getBuiltInConnector('inbox');
    expect(factory?.name).toBe('inbox');
    expect(localInboxOptionsSchema.safeParse({ dir: 'in', patern: '*.csv' }).success).toBe(false);
    const { source } = await setup();
    expect(typeof source.take).toBe('function');
  });

  it('honours custom processed/failed folders', async () => {
    const baseDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-connector-'));
    const options = localInboxOptionsSchema.parse({ dir: 'in', processedDir: 'archive/ok', failedDir: 'archive/bad', processingDir: 'work' });
    const instance = await inboxConnector.create(options, { instanceName: 'erp_inbox', logger: silentLogger(), baseDir, mappings: new Map() });
    await instance.init?.(new AbortController().signal);
    const { readdir, writeFile } = await import('node:fs/promises');
    await writeFile(path.join(baseDir, 'in', 'a.csv'), 'k\n1\n');
    await writeFile(path.join(baseDir, 'in', 'a.csv.done'), '');
    const [unit] = await instance.source!.take(new AbortController().signal);
    await instance.source!.accepted(unit!, new AbortController().signal);
    expect(await readdir(path.join(baseDir, 'work'))).toEqual(['a.csv']);
    await instance.source!.writeBack(unit!.id, [{ ref: '2', status: 'failed', error: 'nope', finishedAt: '2024-01-01T00:00:00Z' }], new AbortController().signal);
    expect((await readdir(path.join(baseDir, 'archive', 'bad'))).sort()).toEqual(['a.csv', 'a.csv.errors.txt', 'a.csv.result.csv']);
    expect(await readdir(path.join(baseDir, 'in'))).toEqual([]);
  });
});
