import { ConfigError } from '../util/errors.js';
import { formatPath, formatZodIssues } from '../config/format-issues.js';
import { loadMapping } from '../mapping/load-mapping.js';
import { STREAM_NAMES } from '../mapping/default-mappings.js';
import type { StreamMapping } from '../mapping/compile-mapping.js';
import type { ConnectorFactory } from '../contracts/index.js';
import { getBuiltInConnector, builtInConnectorNames } from './registry.js';
import { loadConnectorModule, ConnectorModuleError } from './load-connector-module.js';

/** One entry of the `connectors:` block, as the config loader produces it. */
export interface ConnectorConfigEntry {
  readonly type?: string | undefined;
  readonly module?: string | undefined;
  readonly options?: unknown;
  readonly mappings?: Readonly<Record<string, unknown>> | undefined;
}

export interface PrepareConnectorsOptions {
  /** The config file's folder: relative module paths and mapping files resolve against it. */
  readonly baseDir: string;
  /** API variant, selecting mapping variants (`main`, `brokerage`). */
  readonly variant?: string | undefined;
  /** Streams each connector receives (their mappings are resolved); defaults to every stream. */
  readonly streamsFor?: (connectorName: string) => readonly string[];
  /**
   * Streams a connector may have a `mappings:` entry for; default: `streamsFor`. Wider when only
   * some streams run (`sync --stream loads`): a mapping of another stream the connector is a sink
   * of is not a mistake, it is just not needed this time.
   */
  readonly mappableFor?: (connectorName: string) => readonly string[];
}

/** A connector whose factory is found, options parsed and mappings resolved: ready to create. */
export interface PreparedConnector {
  readonly name: string;
  readonly factory: ConnectorFactory<unknown>;
  /** The options as the factory's configSchema returned them. */
  readonly config: unknown;
  readonly mappings: ReadonlyMap<string, StreamMapping>;
}

export interface PreparedConnectors {
  /** In config order; connectors with problems are left out. */
  readonly prepared: readonly PreparedConnector[];
  /** Every problem, each starting with its config path (`connectors.erp.options.dialect: …`). */
  readonly issues: readonly string[];
}

/**
 * The side-effect-free half of starting connectors: finds each factory (a built-in, or a
 * third-party module, which is imported but not created), parses its options with its
 * configSchema and resolves its mappings. Creates no file, folder, table or connection, so
 * `validate-config` can run it; `createConnectors` runs it before creating anything.
 */
export async function prepareConnectors(
  block: Readonly<Record<string, ConnectorConfigEntry>>,
  options: PrepareConnectorsOptions,
): Promise<PreparedConnectors> {
  const issues: string[] = [];
  const prepared: PreparedConnector[] = [];

  for (const [name, entry] of Object.entries(block)) {
    const at = ['connectors', name];
    const factory = await resolveFactory(name, entry, options.baseDir, issues);
    if (!factory) continue;
    const parsed = factory.configSchema.safeParse(entry.options ?? {});
    if (!parsed.success) issues.push(...formatZodIssues(parsed.error, [...at, 'options'], { schema: factory.configSchema, input: entry.options }));

    const streams = options.streamsFor?.(name) ?? STREAM_NAMES;
    const mappable = options.mappableFor?.(name) ?? streams;
    const mappings = new Map<string, StreamMapping>();
    for (const stream of Object.keys(entry.mappings ?? {})) {
      if (!mappable.includes(stream)) {
        const receives = mappable.length > 0 ? mappable.join(', ') : 'none; list it under sync.streams.<stream>.sinks';
        issues.push(`${formatPath([...at, 'mappings', stream])}: connector ${name} does not receive stream "${stream}" (it receives: ${receives})`);
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
    if (!parsed.success) continue;
    // Only when options and mappings are valid on their own: the check combines them.
    if (factory.check && !issues.some((line) => line.startsWith(`${formatPath(at)}.`))) {
      for (const issue of factory.check(parsed.data, { baseDir: options.baseDir, mappings })) issues.push(`${formatPath([...at, ...issue.path])}: ${issue.message}`);
    }
    prepared.push({ name, factory, config: parsed.data, mappings });
  }
  return { prepared, issues };
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
