import type { FileStore } from '../contracts/index.js';
import type { ConnectorSet } from '../plugins/create-connectors.js';
import type { StreamName } from '../sync/stream-definition.js';
import { UsageError } from '../util/errors.js';
import type { ResolvedStream } from './stream-settings.js';

/** The connector a stream stores files with (`options.filesTo`: documentFiles), if any. */
export function filesConnectorOf(stream: ResolvedStream): string | undefined {
  const name = stream.options.filesTo;
  return typeof name === 'string' ? name : undefined;
}

/**
 * The file store of each stream that names one, from its connector's `files` capability; an error
 * naming the config path when the connector is not configured or keeps no files (a `sql`
 * connector, an `sftp` connector without `remoteDir`).
 */
export function fileStoresFor(streams: readonly ResolvedStream[], connectors: ConnectorSet | undefined): Map<StreamName, FileStore> {
  const stores = new Map<StreamName, FileStore>();
  if (!connectors) return stores;
  for (const stream of streams) {
    const name = filesConnectorOf(stream);
    if (name === undefined) continue;
    const at = `sync.streams.${stream.definition.name}.options.filesTo`;
    const handle = connectors.get(name);
    if (!handle) throw new UsageError(`${at}: no connector named ${name} under connectors`);
    if (!handle.instance.files) throw new UsageError(`${at}: connector ${name} cannot store files (a csv connector, or an sftp connector with remoteDir, can)`);
    stores.set(stream.definition.name, handle.instance.files);
  }
  return stores;
}
