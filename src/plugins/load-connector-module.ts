import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FreightSyncError } from '../util/errors.js';
import type { ConnectorFactory } from '../contracts/index.js';

/** A third-party connector module that cannot be loaded or does not export a factory. */
export class ConnectorModuleError extends FreightSyncError {
  readonly modulePath: string;
  constructor(modulePath: string, message: string, options?: { cause?: unknown }) {
    super('CONNECTOR_MODULE_INVALID', message, options);
    this.modulePath = modulePath;
  }
}

/** Why `value` is not a `ConnectorFactory`, or undefined when it is one. */
export function connectorFactoryProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return `expected an object, got ${value === null ? 'null' : typeof value}`;
  const candidate = value as Record<string, unknown>;
  if (typeof candidate.name !== 'string' || candidate.name === '') return '"name" must be a non-empty string';
  const schema = candidate.configSchema as Record<string, unknown> | undefined;
  if (typeof schema !== 'object' || schema === null || typeof schema.safeParse !== 'function') return '"configSchema" must be a zod schema (with safeParse)';
  if (typeof candidate.create !== 'function') return '"create" must be a function';
  if (candidate.check !== undefined && typeof candidate.check !== 'function') return '"check", when given, must be a function';
  if (candidate.capabilities !== undefined && typeof candidate.capabilities !== 'function') return '"capabilities", when given, must be a function';
  return undefined;
}

export function isConnectorFactory(value: unknown): value is ConnectorFactory<unknown> {
  return connectorFactoryProblem(value) === undefined;
}

/**
 * Imports a connector from `module:` in the config. Relative paths resolve against `baseDir`
 * (the config file's folder); bare names (`freight-sync-connector-foo`) are imported as packages.
 * The module's default export, or its named export `connector`, must be a `ConnectorFactory`.
 */
export async function loadConnectorModule(modulePath: string, baseDir: string): Promise<ConnectorFactory<unknown>> {
  const isPath = modulePath.startsWith('.') || path.isAbsolute(modulePath);
  const resolved = isPath ? path.resolve(baseDir, modulePath) : modulePath;
  const specifier = isPath ? pathToFileURL(resolved).href : modulePath;
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConnectorModuleError(resolved, `cannot load connector module ${resolved}: ${reason}`, { cause: error });
  }
  const candidates: [string, unknown][] = [];
  if (loaded.default !== undefined) candidates.push(['default export', loaded.default]);
  if (loaded.connector !== undefined) candidates.push(['export "connector"', loaded.connector]);
  if (candidates.length === 0) {
    throw new ConnectorModuleError(resolved, `connector module ${resolved} has neither a default export nor an export named "connector"`);
  }
  for (const [, value] of candidates) if (isConnectorFactory(value)) return value;
  const [which, value] = candidates[0]!;
  throw new ConnectorModuleError(resolved, `connector module ${resolved}: ${which} is not a ConnectorFactory: ${connectorFactoryProblem(value)}`);
}
