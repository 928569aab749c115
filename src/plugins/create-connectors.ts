import type { Logger } from '../util/logger.js';
import { ConfigError, FreightSyncError, describeError } from '../util/errors.js';
import { createStreamMapper } from '../mapping/stream-mapper.js';
import type { ConnectorFactory, ConnectorInstance, WriterFence } from '../contracts/index.js';
import { prepareConnectors, type ConnectorConfigEntry, type PrepareConnectorsOptions, type PreparedConnector } from './prepare-connectors.js';

export type { ConnectorConfigEntry, PreparedConnector } from './prepare-connectors.js';

export interface CreateConnectorsOptions extends PrepareConnectorsOptions {
  /** The config file's folder: relative module paths, mapping files and options resolve against it. */
  readonly baseDir: string;
  readonly logger: Logger;
  readonly signal?: AbortSignal;
  /** The account lease the connectors' writes are under (ConnectorContext.writerFence). */
  readonly writerFence?: () => WriterFence | undefined;
}

/** A started connector: what was prepared, plus the instance created from it. */
export interface ConnectorHandle extends Pick<PreparedConnector, 'name' | 'factory' | 'mappings'> {
  readonly instance: ConnectorInstance;
}

export interface ConnectorSet {
  /** In config order. */
  readonly connectors: readonly ConnectorHandle[];
  get(name: string): ConnectorHandle | undefined;
  /** Closes every connector in reverse order; one failing close does not skip the others. */
  close(): Promise<void>;
}

export class ConnectorInitError extends FreightSyncError {
  readonly connector: string;
  constructor(connector: string, cause: unknown) {
    super('CONNECTOR_INIT_FAILED', `connector ${connector} failed to start: ${describeError(cause)}`, { cause });
    this.connector = connector;
  }
}

/**
 * Validates every connector's options and mappings first (reporting all problems at once, each
 * with its full config path), then creates and inits the connectors in config order. If one fails
 * to start, the ones already started are closed in reverse order before the error propagates.
 */
export async function createConnectors(
  block: Readonly<Record<string, ConnectorConfigEntry>>,
  options: CreateConnectorsOptions,
): Promise<ConnectorSet> {
  const { prepared, issues } = await prepareConnectors(block, options);
  if (issues.length > 0) throw new ConfigError(issues);
  return startConnectors(prepared, options);
}

/**
 * Creates and inits already-prepared connectors (see prepare-connectors.ts) in order: the half
 * that opens connections and creates folders or tables.
 */
export async function startConnectors(
  prepared: readonly PreparedConnector[],
  options: Pick<CreateConnectorsOptions, 'baseDir' | 'logger' | 'signal' | 'writerFence'>,
): Promise<ConnectorSet> {
  const started: ConnectorHandle[] = [];
  const closeAll = async () => {
    for (const handle of [...started].reverse()) {
      try {
        await handle.instance.close();
      } catch (error) {
        options.logger.error({ err: error, connector: handle.name }, 'connector failed to close');
      }
    }
  };
  const signal = options.signal ?? new AbortController().signal;
  for (const item of prepared) {
    let instance: ConnectorInstance | undefined;
    try {
      instance = await item.factory.create(item.config, {
        instanceName: item.name,
        logger: options.logger.child({ connector: item.name }),
        baseDir: options.baseDir,
        mappings: new Map([...item.mappings].map(([stream, mapping]) => [stream, createStreamMapper(mapping)])),
        ...(options.writerFence ? { writerFence: options.writerFence } : {}),
      });
      await instance.init?.(signal);
      started.push({ name: item.name, factory: item.factory, instance, mappings: item.mappings });
    } catch (error) {
      // An instance created but not started still gets its close, so half-opened resources are released.
      if (instance) await instance.close().catch(() => undefined);
      await closeAll();
      throw new ConnectorInitError(item.name, error);
    }
  }

  let closing: Promise<void> | undefined;
  return {
    connectors: started,
    get: (name) => started.find((c) => c.name === name),
    close: () => (closing ??= closeAll()),
  };
}
