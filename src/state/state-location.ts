import { maskUrlSecrets } from '../util/secrets.js';

/** Where the state lives: the SQLite file of `state.path`, or PostgreSQL at `state.url`. */
export type StateLocation =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string; readonly poolSize: number };

/** The `state` section of the config, as far as locating the store goes. */
export interface StateSettings {
  path: string;
  url?: string | undefined;
  schema?: string | undefined;
  poolSize?: number | undefined;
}

export function stateLocationOf(settings: StateSettings): StateLocation {
  if (settings.url !== undefined) {
    return { kind: 'postgres', url: settings.url, schema: settings.schema ?? 'freight_sync', poolSize: settings.poolSize ?? 10 };
  }
  return { kind: 'sqlite', path: settings.path };
}

/** How messages name the store: the file, or the URL without its password plus the schema. */
export function describeStateLocation(location: StateLocation): string {
  return location.kind === 'sqlite' ? location.path : `${maskUrlSecrets(location.url)} (schema ${location.schema})`;
}
