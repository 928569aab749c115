import { setFlagsFromString } from 'node:v8';
import { nodeArgsOf } from './node-args.js';

/** Bytecode, in KiB, a function runs per tick towards V8's optimising compiler in `freight-sync` on Node 20. */
export const DEFAULT_INTERRUPT_BUDGET_KIB = 264;

/**
 * Node 20's V8 (11.x) counts 66 KiB of bytecode per tick. From V8 12 (Node 22) a function tiers
 * up after a number of invocations (`--invocation-count-for-turbofan`) and `--interrupt-budget`
 * no longer exists: V8 answers it with "unrecognized flag" on stderr and ignores it.
 */
const V8_MAJOR_WITHOUT_INTERRUPT_BUDGET = 12;

/**
 * Issue 14 (CPU): V8 compiles a function with TurboFan once it has run a few interrupt budgets of
 * bytecode. With Node 20's 66 KiB a fresh backfill process compiled ~390 functions, ~1.4 s of
 * compiling on V8's worker threads over a 20,000-load backfill (`--trace-opt`), most of them
 * functions run once per page (state-store queries, the stream runner) that TurboFan barely
 * speeds up. At 264 KiB it compiles ~185 in ~0.5 s; the per-record code (parse, map, encode) is
 * still optimised within the first pages. Alternated 8 rounds on Node 20 (bench/results-cpu.md):
 * ~4% less CPU per page, fresh and warm; 132 KiB showed no clear difference. Set at start-up,
 * before the commands' modules load. `FREIGHT_SYNC_INTERRUPT_BUDGET_KIB` sets another value (`0`
 * leaves V8's); `--interrupt-budget` on node's own command line wins. On V8 ≥ 12 nothing is set,
 * and a value asked for is reported as ignored on stderr. Returns the budget set, in KiB
 * (undefined: V8's own).
 */
export function raiseInterruptBudget(
  env: NodeJS.ProcessEnv = process.env,
  nodeArgs: readonly string[] = nodeArgsOf(env),
  v8Version: string = process.versions.v8,
  setFlag: (flag: string) => void = setFlagsFromString,
  warn: (message: string) => void = (message) => process.stderr.write(`freight-sync: ${message}\n`),
): number | undefined {
  if (nodeArgs.some((arg) => /^--interrupt[-_]budget\b/.test(arg))) return undefined;
  const raw = env.FREIGHT_SYNC_INTERRUPT_BUDGET_KIB;
  const explicit = raw !== undefined && raw.trim() !== '';
  const kib = explicit ? Number(raw) : DEFAULT_INTERRUPT_BUDGET_KIB;
  if (!Number.isInteger(kib) || kib <= 0) return undefined;
  if (Number.parseInt(v8Version, 10) >= V8_MAJOR_WITHOUT_INTERRUPT_BUDGET) {
    if (explicit) warn(`FREIGHT_SYNC_INTERRUPT_BUDGET_KIB=${raw} is ignored: V8 ${v8Version} has no interrupt budget (Node 20's V8 has)`);
    return undefined;
  }
  setFlag(`--interrupt-budget=${kib * 1024}`);
  return kib;
}
