import { describe, expect, it } from 'vitest';
import { OpsMetrics } from '../../src/ops/metrics.js';
import { reconcileService } from '../../src/reconcile/reconcile-service.js';
import type { ReconcileReport } from '../../src/reconcile/report.js';
import { silentLogger } from '../../src/util/logger.js';

const report: ReconcileReport = {
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:10.000Z',
  from: '2025-12-02T00:00:00.000Z',
  to: '2026-01-01T00:00:00.000Z',
  repair: false,
  maxRequests: 480,
  requests: 12,
  coverage: [
    { stream: 'loads', complete: true, listedThrough: '2026-01-01T00:00:00.000Z', notChecked: [], apiRejected: 0 },
    { stream: 'invoices', complete: false, listedThrough: null, notChecked: ['request budget used up before invoices was checked'], apiRejected: 0 },
  ],
  results: [
    {
      stream: 'loads',
      sink: 'erp',
      apiRecords: 10,
      sinkRows: 10,
      matching: 8,
      differences: [
        { kind: 'missing', key: 'L1', detail: 'not in the sink', apiUpdatedAt: null, sinkUpdatedAt: null, repairable: true },
        { kind: 'extra', key: 'X1', detail: 'in the sink, not in the API', apiUpdatedAt: null, sinkUpdatedAt: null, repairable: true },
      ],
      unchecked: [{ key: 'L9', reason: 'request budget used up' }],
      statuses: [],
      invoiceTotals: undefined,
      repair: undefined,
    },
  ],
};

describe('reconcile in run: schedule and metrics', () => {
  it('runs on its cron tick, hands the report on, and stops after the running reconcile', async () => {
    let delivered!: (r: ReconcileReport) => void;
    const got = new Promise<ReconcileReport>((resolve) => (delivered = resolve));
    let runs = 0;
    const service = reconcileService({
      schedule: '* * * * * *',
      run: async () => {
        runs += 1;
        return report;
      },
      onReport: delivered,
      logger: silentLogger(),
      abortSignal: new AbortController().signal,
    });
    const { loops } = await service.start();
    expect(await got).toBe(report);
    await service.stop();
    await loops;
    expect(runs).toBeGreaterThanOrEqual(1);
  });

  it('exports differences per stream, sink and kind, completeness per stream and the last run time', async () => {
    const metrics = new OpsMetrics({ processMetrics: false });
    metrics.recordReconcile(report);
    const { body } = await metrics.render();
    expect(body).toContain('freight_sync_reconcile_differences{stream="loads",sink="erp",kind="missing"} 1');
    expect(body).toContain('freight_sync_reconcile_differences{stream="loads",sink="erp",kind="stale"} 0');
    expect(body).toContain('freight_sync_reconcile_differences{stream="loads",sink="erp",kind="extra"} 1');
    expect(body).toContain('freight_sync_reconcile_differences{stream="loads",sink="erp",kind="unchecked"} 1');
    expect(body).toContain('freight_sync_reconcile_complete{stream="invoices"} 0');
    expect(body).toContain(`freight_sync_reconcile_last_run_timestamp_seconds ${Date.parse(report.finishedAt) / 1000}`);
  });
});
