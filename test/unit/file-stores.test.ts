import { describe, expect, it } from 'vitest';
import { fileStoresFor } from '../../src/app/file-stores.js';
import type { ResolvedStream } from '../../src/app/stream-settings.js';
import type { FileStore } from '../../src/contracts/index.js';
import type { ConnectorSet } from '../../src/plugins/create-connectors.js';
import { streamByName } from '../../src/sync/streams/index.js';

const store: FileStore = { put: async () => ({ name: 'x', sha256: 'x', bytes: 0, location: 'x' }) };

function connectors(instances: Record<string, { files?: FileStore }>): ConnectorSet {
  return { get: (name: string) => (instances[name] ? { name, instance: { ...instances[name], close: async () => undefined } } : undefined) } as unknown as ConnectorSet;
}

function stream(options: Record<string, unknown>): ResolvedStream {
  return { definition: streamByName('documentFiles'), options, sinks: ['erp'], pageSize: 50, settings: {} as ResolvedStream['settings'], lagCover: false };
}

describe('file stores of streams (documentFiles filesTo)', () => {
  it('takes the files capability of the connector filesTo names', () => {
    expect(fileStoresFor([stream({ filesTo: 'docs' })], connectors({ docs: { files: store } })).get('documentFiles')).toBe(store);
  });

  it('refuses a connector that keeps no files, naming the option', () => {
    expect(() => fileStoresFor([stream({ filesTo: 'erp' })], connectors({ erp: {} }))).toThrow(
      'sync.streams.documentFiles.options.filesTo: connector erp cannot store files (a csv connector, or an sftp connector with remoteDir, can)',
    );
  });
});
