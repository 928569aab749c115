import { setFlagsFromString } from 'node:v8';
import { nodeArgsOf } from './node-args.js';

/**
 * Issue 14 (memory of a short command): V8's optimising compiler, TurboFan, is held back while the
 * CLI loads its modules, and let go when a command's action starts.
 *
 * Resolving the ~50 modules `freight-sync --help` loads calls node's own `path.normalizeString`
 * often enough that, on Node 22, TurboFan compiles it and `isPosixPathSeparator` (`--trace-opt`):
 * ~5 MiB of TurboFan's machine code is paged in from the node binary for a process that exits
 * milliseconds later. `--help` then peaked at 57.4–57.7 MiB (60.2–60.5 MB, over the 60 MB goal),
 * and at 51.4 MiB with TurboFan held back. Nothing the CLI loads runs hot before an action starts, so a
 * command that does work is compiled as before: the hold ends in commander's `preAction` hook
 * (main.ts), before the action's own modules load.
 *
 * Left alone when node's own command line or NODE_OPTIONS already says how to tier up (the
 * release would otherwise switch TurboFan on against `--no-turbofan` or `--jitless`).
 */
const TIERING_FLAG = /^--(?:(?:no[-_])?(?:turbofan|opt)|jitless|always[-_](?:turbofan|opt))(?:=|$)/;

let held = false;
let setFlag: (flag: string) => void = setFlagsFromString;

/** Holds TurboFan back until `releaseOptimisingCompiler`; returns whether it did. */
export function holdOptimisingCompilerWhileLoading(
  nodeArgs: readonly string[] = nodeArgsOf(),
  setV8Flag: (flag: string) => void = setFlagsFromString,
): boolean {
  if (held || nodeArgs.some((arg) => TIERING_FLAG.test(arg))) return false;
  setFlag = setV8Flag;
  setFlag('--no-turbofan');
  held = true;
  return true;
}

/** Lets TurboFan compile again (a command's action is starting); a no-op when nothing is held. */
export function releaseOptimisingCompiler(): void {
  if (!held) return;
  held = false;
  setFlag('--turbofan');
}
