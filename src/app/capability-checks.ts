import type { FreightSyncConfig, StreamName } from '../config/types.js';
import type { PreparedConnector } from '../plugins/prepare-connectors.js';

/**
 * A stream's sinks must be able to receive records and `outbound.sources` must be able to supply
 * commands. Asked of each connector's `capabilities(options)`, so the mistake is reported by
 * validation instead of when `run` or `push` reach it with the state database already open.
 * Connectors that do not declare capabilities (older plug-ins) are left to that later check.
 */
export function capabilityIssues(config: FreightSyncConfig, connectors: readonly PreparedConnector[]): string[] {
  const issues: string[] = [];
  const capabilitiesOf = (name: string) => {
    const connector = connectors.find((c) => c.name === name);
    return connector?.factory.capabilities?.(connector.config);
  };
  for (const [stream, settings] of Object.entries(config.sync.streams) as Array<[StreamName, FreightSyncConfig['sync']['streams'][StreamName]]>) {
    if (!settings?.enabled) continue;
    settings.sinks.forEach((name, index) => {
      if (capabilitiesOf(name)?.sink === false) {
        issues.push(`sync.streams.${stream}.sinks[${index}]: connector ${name} cannot receive records (no sink capability with these options)`);
      }
    });
  }
  config.outbound.sources.forEach((name, index) => {
    if (capabilitiesOf(name)?.source === false) {
      issues.push(`outbound.sources[${index}]: connector ${name} cannot supply commands (no source capability with these options; sql needs staging:, sftp needs inbox:)`);
    }
  });
  return issues;
}
