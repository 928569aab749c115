// First: the CLI's heap settings apply before the product's modules load (cli-memory-policy.ts).
import { benchMemoryPolicy } from './cli-memory-policy.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPass } from '../src/app/sync-pass.js';
import { openLoadsBackfillApp, SLIM_LOADS_MAPPING } from './loads-backfill-app.js';
import { startSimulatorProcess, type SimulatorProcess } from './simulator-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export type CpuCase = 'csv-default' | 'csv-slim' | 'null';

export interface CpuPerPageResult {
  case: CpuCase;
  records: number;
  pages: number;
  cpuMs: number;
  cpuMsPerPage: number;
  /** The parts of cpuMsPerPage, and counts that do not depend on the machine's load (CPU time on a shared VM does). */
  userMsPerPage: number;
  systemMsPerPage: number;
  minorFaultsPerPage: number;
  voluntarySwitchesPerPage: number;
  wallSeconds: number;
}

/**
 * CPU of this process (user + system) per 50-record page for a backfill of the loads stream, with
 * the simulator in its own process so the server's CPU is not counted. Measures what a user runs
 * (the default loads mapping into the CSV sink), beside the slim mapping and a null sink.
 */
export async function benchCpuPerPage(loads: number, cases: readonly CpuCase[] = ['csv-default', 'csv-slim', 'null']): Promise<CpuPerPageResult[]> {
  const sim = await startSimulatorProcess({ seed: 7, loads });
  const results: CpuPerPageResult[] = [];
  try {
    for (const which of cases) results.push(await runCase(sim, which));
  } finally {
    await sim.stop();
  }
  return results;
}

async function runCase(sim: SimulatorProcess, which: CpuCase): Promise<CpuPerPageResult> {
  const dataStart = '2000-01-01T00:00:00.000Z';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-cpu-'));
  try {
    const out =
      which === 'null'
        ? { module: path.resolve(here, 'null-sink.js') }
        : { type: 'csv', options: { directory: path.join(dir, 'out') }, ...(which === 'csv-slim' ? { mappings: { loads: SLIM_LOADS_MAPPING } } : {}) };
    const app = await openLoadsBackfillApp(sim, dir, dataStart, out);
    const to = new Date(Date.now() - 5000).toISOString();
    const usageBefore = process.resourceUsage();
    const cpuBefore = process.cpuUsage();
    const started = process.hrtime.bigint();
    let summaries;
    try {
      summaries = await runPass(app, { command: 'bench', backfill: { from: dataStart, to }, signal: new AbortController().signal });
    } finally {
      await app.close();
    }
    const cpu = process.cpuUsage(cpuBefore);
    const usage = process.resourceUsage();
    const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const loadsRun = summaries.find((s) => s.stream === 'loads');
    if (!loadsRun || loadsRun.status !== 'ok') throw new Error(`backfill of loads did not finish: ${loadsRun?.error ?? 'no summary'}`);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const pages = Math.max(1, loadsRun.pages);
    return {
      case: which,
      records: loadsRun.delivered,
      pages: loadsRun.pages,
      cpuMs,
      cpuMsPerPage: cpuMs / pages,
      userMsPerPage: cpu.user / 1000 / pages,
      systemMsPerPage: cpu.system / 1000 / pages,
      minorFaultsPerPage: (usage.minorPageFault - usageBefore.minorPageFault) / pages,
      voluntarySwitchesPerPage: (usage.voluntaryContextSwitches - usageBefore.voluntaryContextSwitches) / pages,
      wallSeconds,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const CASE_NAMES: Record<CpuCase, string> = {
  'csv-default': 'CSV sink, default loads mapping',
  'csv-slim': 'CSV sink, slim 5-column mapping',
  null: 'null sink',
};
export const describeCpuCase = (which: CpuCase): string => CASE_NAMES[which];

/**
 * `node dist/bench/cpu-per-page.js [loads] [case,…]`: this section alone (e.g. under `--cpu-prof`).
 * A case may be repeated (`csv-default,null,csv-default`): the later run shows a warm process.
 */
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const loads = Number(process.argv[2] ?? 20_000);
  const cases = (process.argv[3]?.split(',') as CpuCase[] | undefined) ?? undefined;
  const { semiSpaceMiB, heapGrowingPercent, interruptBudgetKiB } = benchMemoryPolicy;
  process.stdout.write(
    `heap policy: semi-space cap ${semiSpaceMiB === undefined ? 'none' : `${semiSpaceMiB} MiB`}, heap growing ${heapGrowingPercent === undefined ? 'V8 default' : `${heapGrowingPercent}%`}, ` +
      `interrupt budget ${interruptBudgetKiB === undefined ? 'V8 default' : `${interruptBudgetKiB} KiB`}\n`,
  );
  benchCpuPerPage(loads, cases).then(
    (results) => {
      for (const r of results) {
        process.stdout.write(
          `${describeCpuCase(r.case).padEnd(34)} records=${r.records} pages=${r.pages} cpu=${r.cpuMs.toFixed(0)} ms  cpu/page=${r.cpuMsPerPage.toFixed(2)} ms ` +
            `(user ${r.userMsPerPage.toFixed(2)}, system ${r.systemMsPerPage.toFixed(2)})  faults/page=${r.minorFaultsPerPage.toFixed(0)}  ` +
            `switches/page=${r.voluntarySwitchesPerPage.toFixed(0)}  wall=${r.wallSeconds.toFixed(1)} s  load=${os.loadavg()[0]!.toFixed(1)}\n`,
        );
      }
    },
    (error: unknown) => {
      process.stderr.write(`cpu-per-page failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
