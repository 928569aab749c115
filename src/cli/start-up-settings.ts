import fs from 'node:fs';
import { nodeArgsOf } from './node-args.js';
import { semiSpaceCapMiB, semiSpaceFlagGiven } from './young-generation.js';

/**
 * Settings that take effect only when a process starts, and the re-execution that gives them to a
 * long `freight-sync` command started without them (issue 14, memory and CPU):
 *
 * - glibc's malloc reads its tuning from the environment at start (GLIBC_MALLOC_SETTINGS);
 * - on Node ≥ 22 the young generation's cap must be a node flag (`--max-semi-space-size`): its
 *   V8 no longer lets the growth factor hold it (young-generation.ts), and it grows to two 16 MiB
 *   semi-spaces, all resident;
 * - where node is built with V8's Maglev compiler (Node 24; Node 20 and 22 are built without it),
 *   `--no-maglev`: under Maglev-compiled code a 50-record page still outlived the 4 MiB young
 *   generation and was promoted, each costing full collections (bench/results-cpu.md, sixteenth
 *   and seventeenth sessions). Set at run time (`v8.setFlagsFromString`) it did not help.
 *
 * The container image starts with both (Dockerfile); a process started some other way (`npm i -g`,
 * a systemd unit, a shell) gets them, on Node ≥ 22.15, by replacing itself once with the same
 * program under the same PID (`process.execve`: no parent stays resident, signals and the exit
 * status are the program's own). Measured (bench/results-scaling.md, fifteenth session): on Node
 * 24 a 10^5-load backfill peaked at ~157–160 MiB without them, ~139 MiB with them. README, "Memory".
 */
export const GLIBC_MALLOC_SETTINGS: Readonly<Record<string, string>> = {
  // One arena per allocating thread (V8's helpers, libuv's pool) otherwise, each resident at its own peak.
  MALLOC_ARENA_MAX: '2',
  // Fixed thresholds: glibc otherwise raises its mmap threshold the first time V8 frees a 1–2 MiB
  // block (its string table growing, a compiler zone), and blocks of that size leave holes in the arenas.
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
};

/** `auto` (the default) gives the malloc settings where they are missing; `off` never does. */
export const MALLOC_SWITCH = 'FREIGHT_SYNC_GLIBC_MALLOC';
/**
 * Set in the re-executed process's environment, the guard against a second re-execution; taken
 * out of process.env as that process starts, so the processes it starts do not inherit it.
 */
export const REEXECUTED_MARK = 'FREIGHT_SYNC_REEXECUTED';
/** `off` (the default): a long command runs without Maglev where node has it; `on`: as V8 has it. */
export const MAGLEV_SWITCH = 'FREIGHT_SYNC_MAGLEV';
/** A node flag that already says how Maglev runs (or that nothing is compiled): left as given. */
const MAGLEV_FLAG = /^--(?:no[-_])?(?:maglev|jitless)(?:[-_=]|$)/;
/** The first Node major whose V8 ignores the growth factor young-generation.ts sets at run time. */
const FLAG_ONLY_YOUNG_GENERATION_FROM = 22;

/**
 * The commands that run long or move many records: a short command (`status`, `--help`) would
 * pay a second start-up (~90 ms) for memory it never reaches.
 */
const LONG_COMMANDS = new Set(['run', 'sync', 'backfill', 'push', 'reconcile', 'demo', 'state']);
/** Global options that take a value as the next argument (main.ts), skipped to find the command. */
const GLOBAL_OPTIONS_WITH_VALUE = new Set(['-c', '--config', '--log-level', '--account']);

/** The command named on a `freight-sync` command line (`argv` as process.argv), or undefined. */
export function commandOf(argv: readonly string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return argv[i + 1];
    if (GLOBAL_OPTIONS_WITH_VALUE.has(arg)) i += 1;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/** Malloc tuning the environment already chose, if any: then it is left as it is, whole. */
function chosenMallocTuning(env: NodeJS.ProcessEnv): string | undefined {
  const set = Object.keys(env).find((name) => name.startsWith('MALLOC_') && env[name] !== undefined);
  if (set) return `${set} is set`;
  if (env.GLIBC_TUNABLES?.includes('glibc.malloc.')) return 'GLIBC_TUNABLES sets glibc.malloc';
  return undefined;
}

export interface StartUpSituation {
  argv: readonly string[];
  /**
   * Whether argv[1] is the CLI's own entry point: only then is argv a freight-sync command line
   * to run again (a process that imports bin.js some other way — a test runner started as `vitest
   * run` — must never be re-executed).
   */
  startedAsCli: boolean;
  /** The node flags the process runs with (process.execArgv). */
  execArgv: readonly string[];
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  nodeMajor: number;
  /** Whether `process.execve` exists (Node ≥ 22.15 and 23.11, POSIX; bin.ts runs on the main thread). */
  canExecve: boolean;
  /** glibc's version at run time; undefined on musl and non-Linux systems. Asked only when needed. */
  glibcVersion: () => string | undefined;
  /** Whether node's V8 is built with Maglev (`process.config.variables.v8_enable_maglev`), on by default then. */
  maglevBuiltIn: boolean;
}

export type StartUpPlan =
  | { reexecute: true; env: NodeJS.ProcessEnv; execArgv: string[]; gives: string[] }
  | { reexecute: false; why: string };

/** A switch's choice: its value trimmed and lower-cased, or `fallback` when unset or empty. */
function choiceOf(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  return env[name]?.trim().toLowerCase() || fallback;
}

/** A warning for each start-up switch holding a value it does not know (a typo must not pass unseen). */
export function mistypedStartUpSwitches(env: NodeJS.ProcessEnv): string[] {
  const warnings: string[] = [];
  if (!['auto', 'off'].includes(choiceOf(env, MALLOC_SWITCH, 'auto'))) {
    warnings.push(`${MALLOC_SWITCH}=${env[MALLOC_SWITCH]} is neither auto nor off: glibc's malloc settings are left as the environment has them`);
  }
  if (!['off', 'on'].includes(choiceOf(env, MAGLEV_SWITCH, 'off'))) {
    warnings.push(`${MAGLEV_SWITCH}=${env[MAGLEV_SWITCH]} is neither off nor on: Maglev is left as V8 has it`);
  }
  return warnings;
}

/** The malloc settings this process lacks and should have, or why none. */
function missingMalloc(situation: StartUpSituation): { env?: Record<string, string>; why: string } {
  const { env } = situation;
  const choice = choiceOf(env, MALLOC_SWITCH, 'auto');
  if (choice === 'off') return { why: `${MALLOC_SWITCH}=off` };
  if (choice !== 'auto') return { why: `${MALLOC_SWITCH}=${env[MALLOC_SWITCH]} is neither auto nor off` };
  const chosen = chosenMallocTuning(env);
  if (chosen) return { why: `${chosen}: the environment's choice is kept` };
  if (situation.platform !== 'linux') return { why: `no glibc (${situation.platform})` };
  if (!situation.glibcVersion()) return { why: 'no glibc (musl?)' };
  return { env: { ...GLIBC_MALLOC_SETTINGS }, why: 'glibc malloc settings' };
}

/** The young generation's cap as a node flag when this Node needs it as one, or why not. */
function missingSemiSpaceFlag(situation: StartUpSituation): { flag?: string; why: string } {
  if (situation.nodeMajor < FLAG_ONLY_YOUNG_GENERATION_FROM) return { why: `Node ${situation.nodeMajor} holds the young generation's cap at run time` };
  const cap = semiSpaceCapMiB(situation.env, nodeArgsOf(situation.env, situation.execArgv));
  if (cap === undefined) return { why: 'the young generation is left to V8 or to a node flag given' };
  return { flag: `--max-semi-space-size=${cap}`, why: 'young generation cap' };
}

/** `--no-maglev` when this node runs Maglev and nothing chose otherwise, or why not. */
function missingMaglevFlag(situation: StartUpSituation): { flag?: string; why: string } {
  if (!situation.maglevBuiltIn) return { why: 'no Maglev in this node' };
  const choice = choiceOf(situation.env, MAGLEV_SWITCH, 'off');
  if (choice === 'on') return { why: `${MAGLEV_SWITCH}=on` };
  if (choice !== 'off') return { why: `${MAGLEV_SWITCH}=${situation.env[MAGLEV_SWITCH]} is neither off nor on` };
  if (nodeArgsOf(situation.env, situation.execArgv).some((arg) => MAGLEV_FLAG.test(arg))) return { why: 'Maglev is left to the node flag given' };
  return { flag: '--no-maglev', why: 'Maglev off' };
}

/** Whether to re-execute, and with which environment and node flags. */
export function planStartUpSettings(situation: StartUpSituation): StartUpPlan {
  const stay = (why: string): StartUpPlan => ({ reexecute: false, why });
  if (situation.env[REEXECUTED_MARK] === '1') return stay('re-executed already');
  if (!situation.startedAsCli) return stay('not started as the freight-sync command');
  const command = commandOf(situation.argv);
  if (!command || !LONG_COMMANDS.has(command)) return stay(`${command ?? 'no command'}: a short command`);
  // Cheap checks first: the C library is asked only when a re-execution is possible at all.
  if (!situation.canExecve) return stay('this Node cannot re-execute itself (process.execve: Node ≥ 22.15)');
  const semiSpace = missingSemiSpaceFlag(situation);
  const maglev = missingMaglevFlag(situation);
  const malloc = missingMalloc(situation);
  const flags = [semiSpace.flag, maglev.flag].filter((flag): flag is string => flag !== undefined);
  if (flags.length === 0 && !malloc.env) return stay(`nothing missing (${malloc.why}; ${semiSpace.why}; ${maglev.why})`);
  return {
    reexecute: true,
    env: { ...situation.env, ...malloc.env, [REEXECUTED_MARK]: '1' },
    execArgv: [...situation.execArgv, ...flags],
    gives: [...Object.entries(malloc.env ?? {}).map(([name, value]) => `${name}=${value}`), ...flags],
  };
}

/** What reexecWithStartUpSettings decided at start (undefined when it did not run: tests, benchmarks). */
let startPlan: StartUpPlan | undefined;
/** Whether this process is the re-executed one (its mark is taken out of process.env at start). */
let reexecuted = false;

type Execve = (file: string, args?: readonly string[], env?: NodeJS.ProcessEnv) => never;

/** Whether `argv1` (a path as node was given it: npm's bin link, a relative path) is the file `entry`. */
function isSameFile(argv1: string | undefined, entry: string): boolean {
  if (!argv1) return false;
  try {
    return fs.realpathSync(argv1) === fs.realpathSync(entry);
  } catch {
    return false;
  }
}

/**
 * Replaces this process with itself under the settings planStartUpSettings says it lacks; returns
 * otherwise (and when the exec fails: the process goes on as it was). Called first thing in bin.ts
 * (`entry`: its own file), before any output, timer or file the exec would drop (it keeps stdin,
 * stdout and stderr only) — and before the V8 flags memory-policy.ts sets, which the new process
 * sets again.
 */
export function reexecWithStartUpSettings(entry: string): StartUpPlan {
  if (process.env[REEXECUTED_MARK] === '1') {
    // The mark guards this process only: a process it starts (`demo`'s daemon, a child of a
    // test) decides for itself, with the malloc variables it inherits and the flags it is given.
    delete process.env[REEXECUTED_MARK];
    reexecuted = true;
    startPlan = { reexecute: false, why: 're-executed already' };
    return startPlan;
  }
  // Written at once (fs.writeSync): an exec right after would drop a write still queued.
  for (const warning of mistypedStartUpSwitches(process.env)) fs.writeSync(2, `freight-sync: ${warning}\n`);
  const execve = (process as unknown as { execve?: Execve }).execve;
  const plan = planStartUpSettings({
    argv: process.argv,
    startedAsCli: isSameFile(process.argv[1], entry),
    execArgv: process.execArgv,
    env: process.env,
    platform: process.platform,
    nodeMajor: Number(process.versions.node.split('.')[0]),
    canExecve: typeof execve === 'function',
    glibcVersion: () => {
      // The report's header says which C library runs the process (~3 ms; the network part skipped).
      // (`excludeNetwork`: Node ≥ 20.13; @types/node 20 does not name it.)
      const report = process.report as NodeJS.ProcessReport & { excludeNetwork?: boolean };
      const excluded = report.excludeNetwork;
      report.excludeNetwork = true;
      try {
        return (report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime;
      } finally {
        report.excludeNetwork = excluded;
      }
    },
    maglevBuiltIn: maglevBuiltIn(),
  });
  startPlan = plan;
  if (!plan.reexecute) return plan;
  try {
    execve!.call(process, process.execPath, [process.execPath, ...plan.execArgv, ...process.argv.slice(1)], plan.env);
  } catch (error) {
    startPlan = { reexecute: false, why: `re-executing failed (${error instanceof Error ? error.message : String(error)})` };
  }
  return startPlan;
}

/** Whether this node's V8 is built with Maglev (Node 24: yes; Node 20 and 22: no). */
export function maglevBuiltIn(): boolean {
  return (process.config.variables as Record<string, unknown>).v8_enable_maglev === 1;
}

/** One line on the process's start-up settings, for the daemon's start-up log. */
export function describeStartUpSettings(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: readonly string[] = process.execArgv,
  plan: StartUpPlan | undefined = startPlan,
  withMaglev: boolean = maglevBuiltIn(),
): string {
  const malloc = Object.keys(GLIBC_MALLOC_SETTINGS)
    .map((name) => `${name}=${env[name] ?? 'unset'}`)
    .join(' ');
  const nodeArgs = nodeArgsOf(env, execArgv);
  const semiSpace = semiSpaceFlagGiven(nodeArgs) ?? '--max-semi-space-size=unset';
  const maglev = withMaglev ? (nodeArgs.filter((arg) => MAGLEV_FLAG.test(arg)).join(' ') || 'maglev=on') : 'maglev=not built in';
  const how = reexecuted || env[REEXECUTED_MARK] === '1' ? 're-executed with them' : plan && !plan.reexecute ? `not re-executed: ${plan.why}` : 'as started';
  return `start-up settings: ${malloc} ${semiSpace} ${maglev}; ${how}`;
}
