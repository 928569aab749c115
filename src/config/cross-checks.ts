import { parseBoolean } from '../util/boolean.js';
import { CONNECTOR_NAME_PATTERN } from './schema.js';
import { STREAM_NAMES } from './types.js';
import { formatPath } from './format-issues.js';

/**
 * Checks between sections (a stream's sinks name connectors, outbound sources name connectors).
 * Runs on the raw interpolated input, defensively, so these problems are listed together with
 * the schema's own issues instead of only after every other problem has been fixed.
 */
export function crossCheckIssues(raw: unknown): string[] {
  const issues: string[] = [];
  const root = asRecord(raw);
  if (!root) return issues;

  const connectors = asRecord(root['connectors']) ?? {};
  const connectorNames = Object.keys(connectors);
  const knownList = connectorNames.length > 0 ? connectorNames.join(', ') : 'none are configured';

  for (const name of connectorNames) {
    if (!CONNECTOR_NAME_PATTERN.test(name)) {
      issues.push(
        `${formatPath(['connectors', name])}: connector name must start with a lowercase letter and contain only a-z, 0-9 and _`,
      );
    }
  }

  const streams = asRecord(asRecord(root['sync'])?.['streams']) ?? {};
  for (const [streamName, value] of Object.entries(streams)) {
    const stream = asRecord(value);
    // An unknown stream name is already reported by the schema; one message per mistake.
    if (!stream || !(STREAM_NAMES as readonly string[]).includes(streamName)) continue;
    const enabled = stream['enabled'] === undefined || parseBoolean(stream['enabled']) === true;
    const sinks = stream['sinks'];
    if (Array.isArray(sinks)) {
      sinks.forEach((sink, index) => {
        if (typeof sink === 'string' && sink !== '' && !(sink in connectors)) {
          issues.push(
            `${formatPath(['sync', 'streams', streamName, 'sinks', index])}: stream "${streamName}" names connector "${sink}", which is not defined under connectors (defined: ${knownList})`,
          );
        }
      });
    }
    // documentFiles stores its files with the connector its `filesTo` option names.
    const filesTo = asRecord(stream['options'])?.['filesTo'];
    if (typeof filesTo === 'string' && filesTo !== '' && !(filesTo in connectors)) {
      issues.push(
        `${formatPath(['sync', 'streams', streamName, 'options', 'filesTo'])}: stream "${streamName}" names connector "${filesTo}", which is not defined under connectors (defined: ${knownList})`,
      );
    }
    if (enabled && (sinks === undefined || (Array.isArray(sinks) && sinks.length === 0))) {
      issues.push(
        `${formatPath(['sync', 'streams', streamName, 'sinks'])}: stream "${streamName}" is enabled but has no sinks (add connector names, or set enabled: false)`,
      );
    }
  }

  const sources = asRecord(root['outbound'])?.['sources'];
  if (Array.isArray(sources)) {
    sources.forEach((source, index) => {
      if (typeof source === 'string' && source !== '' && !(source in connectors)) {
        issues.push(
          `${formatPath(['outbound', 'sources', index])}: names connector "${source}", which is not defined under connectors (defined: ${knownList})`,
        );
      }
    });
  }
  return issues;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
