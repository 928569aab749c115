import { renderTable } from '../../src/cli/table.js';
import type { ChaosReport } from './run-chaos.js';

/** The printed result: sink × stream, outbound, secrets, and what the simulator threw at the daemon. */
export function renderChaosReport(r: Omit<ChaosReport, 'table'>): string {
  const o = r.options;
  const s = r.simulator;
  const faults = Object.values(s.faults).reduce((a, b) => a + b, 0);
  let out = `\nchaos ${o.label} — seed ${o.seed}, variant ${o.variant}, ${r.kills} SIGKILLs, ${(r.durationMs / 1000).toFixed(0)} s, ${r.ok ? 'OK' : 'FAILED'}\n`;
  out += `simulator: ${s.requests} requests, ${s.rateLimited} × 429, ${faults} injected faults (${Object.entries(s.faults).map(([k, v]) => `${k} ${v}`).join(', ')}), `;
  out += `${s.ambiguousCreates} ambiguous creates, ${s.lateWrites} late writes, ${s.tokensIssued} tokens issued (TTL ${o.accessTokenTtlMs} ms), clock offset ${o.clockOffsetMs / 1000} s\n\n`;
  out += renderTable(
    ['sink', 'stream', 'truth', 'missing', 'stale', 'duplicates', 'wrong-tombstone', 'phantom'],
    r.sinks.map((x) => [x.sink, x.stream, x.truth, x.missing, x.stale, x.duplicates, x.wrongTombstone, x.phantom]),
  );
  for (const x of r.sinks) if (x.examples.length > 0) out += `  ${x.sink}/${x.stream}: ${x.examples.join('; ')}\n`;
  for (const x of r.skipped) out += `skipped sink ${x.name}: ${x.reason}\n`;
  out += '\n';
  out += renderTable(
    ['outbound', 'expected', 'created', 'duplicates', 'write-back wrong'],
    r.outbound.map((x) => [x.via, x.expected, x.created, x.duplicates, x.writeBackWrong]),
  );
  for (const x of r.outbound) if (x.examples.length > 0) out += `  ${x.via}: ${x.examples.join('; ')}\n`;
  out += `\nsecrets in ${o.logLevel} output: ${r.secrets.length === 0 ? 'none found' : r.secrets.map((h) => `${h.label} ×${h.count}`).join(', ')}\n`;
  for (const p of r.problems) out += `problem: ${p}\n`;
  return out;
}
