import type { LoadedConfig } from '../config/load-config.js';
import type { FreightSyncConfig, StreamName } from '../config/types.js';
import { prepareConnectors, type PreparedConnector } from '../plugins/prepare-connectors.js';
import { streamByName } from '../sync/streams/index.js';
import { ConfigError } from '../util/errors.js';
import { capabilityIssues } from './capability-checks.js';
import { checkStreams, type ResolvedStream } from './stream-settings.js';
import { webhookIssues } from './webhook-checks.js';

/** Everything a valid config resolves to, before anything is created. */
export interface ValidatedDeployment {
  readonly loaded: LoadedConfig;
  /** Every enabled stream, with parsed options and checked page size (`--stream` narrows later). */
  readonly streams: readonly ResolvedStream[];
  /** Every connector of `connectors:` in config order, options parsed and mappings resolved. */
  readonly connectors: readonly PreparedConnector[];
}

/**
 * The one validation of a deployment beyond the config schema: stream options and page sizes
 * against the stream definitions, connector options against each connector's configSchema
 * (third-party modules are imported for it, never created), mappings, whether each sink and
 * outbound source can serve that role, and webhook settings.
 * Used by `validate-config` and by every command before it opens the app, so both refuse the
 * same files. Side-effect free: no folder, file, database or connection is created.
 *
 * Throws one ConfigError naming the config file and listing every problem with its config path.
 */
export async function validateDeployment(loaded: LoadedConfig): Promise<ValidatedDeployment> {
  const { config } = loaded;
  const { resolved: streams, issues } = checkStreams(config);
  const { prepared, issues: connectorIssues } = await prepareConnectors(config.connectors, {
    baseDir: loaded.baseDir,
    variant: config.api.variant,
    streamsFor: (name) => streamsSentTo(config, name, { enabledOnly: true }),
    mappableFor: (name) => streamsSentTo(config, name, { enabledOnly: false }),
  });
  issues.push(...connectorIssues, ...capabilityIssues(config, prepared), ...webhookIssues(config));
  if (issues.length > 0) throw new ConfigError(issues, loaded.filePath);
  return { loaded, streams, connectors: prepared };
}

/**
 * Streams of the variant that list `connector` among their sinks. Mappings are resolved for the
 * enabled ones; a mapping for a disabled one is allowed (switching a stream off should not make
 * the file invalid) but not loaded. openApp uses it too, so `sync --stream customers` accepts a
 * connector's `mappings.loads`.
 */
export function streamsSentTo(config: FreightSyncConfig, connector: string, { enabledOnly }: { enabledOnly: boolean }): StreamName[] {
  const out: StreamName[] = [];
  for (const [name, settings] of Object.entries(config.sync.streams) as Array<[StreamName, FreightSyncConfig['sync']['streams'][StreamName]]>) {
    if (!settings || !settings.sinks.includes(connector)) continue;
    if (enabledOnly && !settings.enabled) continue;
    // A stream the variant lacks is reported by checkStreams; its mapping would only add noise.
    if (!streamByName(name).variants.includes(config.api.variant)) continue;
    out.push(name);
  }
  return out;
}
