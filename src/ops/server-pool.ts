import type { AppContext } from '../app/app-context.js';
import { HttpServers } from './http-servers.js';

const pools = new WeakMap<AppContext, HttpServers>();

/** The HTTP servers of one running app, shared by the ops endpoints and the webhook receiver. */
export function serversFor(app: AppContext): HttpServers {
  let pool = pools.get(app);
  if (!pool) pools.set(app, (pool = new HttpServers(app.logger.child({ component: 'http' }))));
  return pool;
}
