import type { Logger } from '../util/logger.js';
import { ConfigError, FreightSyncError, describeError } from '../util/errors.js';
import { formatPath, formatZodIssues } from '../config/format-issues.js';
import { loadMapping } from '../mapping/load-mapping.js';
import { STREAM_NAMES } from '../mapping/default-mappings.js';
import type { StreamMapping } from '../mapping/compile-mapping.js';
import { createStreamMapper } from '../mapping/stream-mapper.js';
import type { ConnectorFactory, ConnectorInstance } from '../contracts/index.js';
import { getBuiltInConnector, builtInConnectorNames } from './registry.js';
import { loadConnectorModule, ConnectorModuleError } from './load-connector-module.js';

/** One entry of the `connectors:` block, as the config loader produces it. */
export interface ConnectorConfigEntry {
  readonly type?: string | undefined;
  readonly module?: string | undefined;
  readonly options?: unknown;
  readonly mappings?: Readonly<Record<string, unknown>> | undefined;
}

export interface CreateConnectorsOptions {
  /** The config file's folder: relative module paths, mapping files and options resolve against it. */
  readonly baseDir: string;
  readonly logger: Logger;
  /** API variant, selecting mapping variants (`main`, `brokerage`). */
  readonly variant?: string | undefined;
  /** Streams each connector receives; defaults to every stream. */
  readonly streamsFor?: (connectorName: string) => readonly string[];
  readonly signal?: AbortSignal;
}

export interface ConnectorHandle {
  readonly name: string;
  readonly factory: ConnectorFactory<unknown>;
  readonly instance: ConnectorInstance;
  readonly mappings: ReadonlyMap<string, StreamMapping>;
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

interface Prepared {
  readonly name: string;
  readonly factory: ConnectorFactory<unknown>;
  readonly config: unknown;
  readonly mappings: Map<string, StreamMapping>;
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
  const issues: string[] = [];
  const prepared: Prepared[] = [];

  for (const [name, entry] of Object.entries(block)) {
    const at = ['connectors', name];
    const factory = await resolveFactory(name, entry, options.baseDir, issues);
    if (!factory) continue;
    const parsed = factory.configSchema.safeParse(entry.options ?? {});
    if (!parsed.success) issues.push(...formatZodIssues(parsed.error, [...at, 'options'], { schema: factory.configSchema, input: entry.options }));

    const streams = options.streamsFor?.(name) ?? STREAM_NAMES;
    const mappings = new Map<string, StreamMapping>();
    for (const stream of Object.keys(entry.mappings ?? {})) {
      if (!streams.includes(stream)) {
        issues.push(`${formatPath([...at, 'mappings', stream])}: connector ${name} does not receive stream "${stream}" (it receives: ${streams.join(', ')})`);
      }
    }
    for (const stream of streams) {
      try {
        mappings.set(
          stream,
          await loadMapping(stream, entry.mappings?.[stream], { baseDir: options.baseDir, variant: options.variant, pathPrefix: [...at, 'mappings', stream] }),
        );
      } catch (error) {
        if (error instanceof ConfigError) issues.push(...error.issues);
        else throw error;
      }
    }
    if (parsed.success) prepared.push({ name, factory, config: parsed.data, mappings });
  }
  if (issues.length > 0) throw new ConfigError(issues);

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

async function resolveFactory(
  name: string,
  entry: ConnectorConfigEntry,
  baseDir: string,
  issues: string[],
): Promise<ConnectorFactory<unknown> | undefined> {
  const at = ['connectors', name];
  if (entry.module !== undefined && entry.type !== undefined) {
    issues.push(`${formatPath([...at, 'module'])}: give either type (built-in) or module (plug-in), not both`);
    return undefined;
  }
  if (entry.module !== undefined) {
    try {
      return await loadConnectorModule(entry.module, baseDir);
    } catch (error) {
      if (!(error instanceof ConnectorModuleError)) throw error;
      issues.push(`${formatPath([...at, 'module'])}: ${error.message}`);
      return undefined;
    }
  }
  const type = entry.type ?? name;
  const factory = await getBuiltInConnector(type);
  if (!factory) {
    issues.push(`${formatPath([...at, 'type'])}: unknown connector type "${type}" (built-in: ${builtInConnectorNames().join(', ')}; or give module: ./path.js)`);
  }
  return factory;
}
