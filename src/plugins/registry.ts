import type { ConnectorFactory } from '../contracts/index.js';

/**
 * Built-in connectors by `type:` name. Loaded lazily so a daemon that only uses CSV never loads
 * the SQL driver. To add one: a line here, nothing else.
 */
const BUILT_INS: Record<string, () => Promise<ConnectorFactory<never>>> = {
  csv: async () => (await import('../../connectors/csv/index.js')).csvConnector as ConnectorFactory<never>,
  sql: async () => (await import('../../connectors/sql/index.js')).sqlConnector as ConnectorFactory<never>,
  inbox: async () => (await import('../../connectors/inbox/index.js')).inboxConnector as ConnectorFactory<never>,
  sftp: async () => (await import('../../connectors/sftp/index.js')).sftpConnector as ConnectorFactory<never>,
};

export function builtInConnectorNames(): string[] {
  return Object.keys(BUILT_INS).sort();
}

/** The factory of a built-in connector, or undefined when `name` is not one. */
export async function getBuiltInConnector(name: string): Promise<ConnectorFactory<unknown> | undefined> {
  const load = Object.hasOwn(BUILT_INS, name) ? BUILT_INS[name] : undefined;
  return load ? ((await load()) as ConnectorFactory<unknown>) : undefined;
}
