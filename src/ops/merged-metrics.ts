import { AggregatorRegistry, collectDefaultMetrics, Registry } from 'prom-client';
import type { OpsMetrics } from './metrics.js';

/** What `/metrics` renders: one account's OpsMetrics, or the merge of several. */
export interface MetricsEndpoint {
  render(): Promise<{ contentType: string; body: string }>;
}

/**
 * `/metrics` of a process serving several accounts: each account's registry carries its
 * `account` label (a default label), and the families of the same name are merged into one, so
 * the scrape holds one HELP/TYPE per metric with a series per account. The process's own metrics
 * (CPU, memory, event loop) are added once, without an account.
 */
export function mergedMetrics(accounts: readonly OpsMetrics[]): MetricsEndpoint {
  const processRegistry = new Registry();
  collectDefaultMetrics({ register: processRegistry, prefix: 'freight_sync_' });
  return {
    async render() {
      const parts = await Promise.all(accounts.map((m) => m.registry.getMetricsAsJSON()));
      const merged = AggregatorRegistry.aggregate(parts);
      // The process's families are rendered as they are: aggregation would drop some (its 'omit'
      // aggregator, meant for cluster workers, removes process_start_time_seconds).
      return { contentType: merged.contentType, body: `${await processRegistry.metrics()}\n${await merged.metrics()}` };
    },
  };
}
