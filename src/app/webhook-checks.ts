import type { FreightSyncConfig } from '../config/types.js';

/**
 * Paths the ops server serves on `http.listen` (src/ops/ops-service.ts mounts them, with `/` and
 * the console's `/console/`). Listed here too so validation does not import the ops module; keep
 * the two in step.
 */
export const OPS_ROUTES = ['/healthz', '/readyz', '/metrics'] as const;

/**
 * What the webhook settings can get wrong that the schema alone cannot see: the receiver sharing
 * a port with the ops server on one of its paths only fails when `run` mounts the routes, after
 * the state database already exists.
 */
export function webhookIssues(config: FreightSyncConfig): string[] {
  const { webhooks, http } = config;
  if (!webhooks.enabled) return [];
  const issues: string[] = [];
  const shared = http.enabled && webhooks.listen === http.listen;
  if (shared && ((OPS_ROUTES as readonly string[]).includes(webhooks.path) || webhooks.path === '/')) {
    issues.push(
      `webhooks.path: ${webhooks.path} is an ops endpoint on the same address as http.listen (${http.listen}); choose another path or another webhooks.listen`,
    );
  }
  if (shared && http.console.enabled && (webhooks.path === '/console' || webhooks.path.startsWith('/console/'))) {
    issues.push(`webhooks.path: ${webhooks.path} is under the web console (/console/) on the same address as http.listen (${http.listen}); choose another path`);
  }
  return issues;
}
