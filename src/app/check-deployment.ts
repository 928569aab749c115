import { describeStateLocation, stateLocationOf } from '../state/state-location.js';
import type { ValidatedDeployment } from './validate-deployment.js';
import { openApp } from './compose.js';
import { startConnectors } from '../plugins/create-connectors.js';
import { STREAM_PROBES } from '../sync/stream-probes.js';
import { describeError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';

export type CheckKind = 'state' | 'api' | 'stream' | 'connector';

/** One line of `freight-sync check`. */
export interface CheckRow {
  kind: CheckKind;
  /** `state database`, `token`, the stream or connector name. */
  target: string;
  ok: boolean;
  /** What was checked and found, or the error naming what failed. */
  detail: string;
  durationMs: number;
}

async function timed(kind: CheckKind, target: string, work: () => Promise<string>): Promise<CheckRow> {
  const started = Date.now();
  try {
    const detail = await work();
    return { kind, target, ok: true, detail, durationMs: Date.now() - started };
  } catch (error) {
    return { kind, target, ok: false, detail: describeError(error), durationMs: Date.now() - started };
  }
}

/**
 * `freight-sync check`: proves a deployment can work without starting it. Opens the state
 * database, obtains a token, makes one cheap call per enabled stream's endpoint, and starts every
 * connector the deployment uses — alone, so one failing does not hide the others — running its
 * own check (connect, folders writable, tables present or created as `run` would). Every failure
 * is a row naming the part at fault; nothing stops at the first.
 */
export async function checkDeployment(deployment: ValidatedDeployment, options: { logger: Logger; signal: AbortSignal }): Promise<CheckRow[]> {
  const { loaded } = deployment;
  const rows: CheckRow[] = [];
  const started = Date.now();
  let app: Awaited<ReturnType<typeof openApp>> | undefined;
  try {
    app = await openApp(loaded, { logger: options.logger, withConnectors: false, signal: options.signal });
    rows.push({ kind: 'state', target: 'state database', ok: true, detail: `${describeStateLocation(stateLocationOf(loaded.config.state))} opened and migrated`, durationMs: Date.now() - started });
  } catch (error) {
    rows.push({ kind: 'state', target: 'state database', ok: false, detail: describeError(error), durationMs: Date.now() - started });
  }

  if (app) {
    const client = app.client;
    const token = await timed('api', 'token', async () => {
      // An account marked reauth_required is tried once more here (the user asks): success clears the mark.
      const marked = await client.tokens.reauthRequired();
      await client.tokens.reauthenticate(options.signal);
      return `${loaded.config.api.variant} at ${loaded.config.api.baseUrl}: token obtained${marked ? ' (reauth_required cleared)' : ''}`;
    });
    rows.push(token);
    for (const stream of deployment.streams) {
      const probe = STREAM_PROBES[stream.definition.name];
      if (stream.definition.pushOnly) continue;
      if (!probe) {
        rows.push({ kind: 'stream', target: stream.definition.name, ok: true, detail: 'reads no endpoint of its own (fed by the webhook inbox)', durationMs: 0 });
      } else if (!token.ok) {
        rows.push({ kind: 'stream', target: stream.definition.name, ok: false, detail: 'not tried: no token', durationMs: 0 });
      } else {
        rows.push(await timed('stream', stream.definition.name, async () => {
          const result = await probe(client, options.signal);
          const records = result.items.length;
          return `${result.endpoint}: answered (${records} record${records === 1 ? '' : 's'} in a 1-record probe)`;
        }));
      }
    }
    await app.close();
  }

  const used = new Set(deployment.streams.flatMap((s) => s.sinks));
  if (loaded.config.outbound.enabled) for (const name of loaded.config.outbound.sources) used.add(name);
  for (const prepared of deployment.connectors.filter((c) => used.has(c.name))) {
    rows.push(await timed('connector', prepared.name, async () => {
      const set = await startConnectors([prepared], { baseDir: loaded.baseDir, logger: options.logger.child({ component: 'connectors' }), signal: options.signal });
      try {
        const instance = set.connectors[0]!.instance;
        await instance.check?.(options.signal);
        const roles = [instance.sink ? 'sink' : null, instance.source ? 'source' : null].filter(Boolean).join(' + ');
        return `${prepared.factory.name} (${roles || 'no role'}): started${instance.check ? ' and checked' : ''}`;
      } finally {
        await set.close();
      }
    }));
  }
  return rows;
}
