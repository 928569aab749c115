import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { assertBuilt, CLI_BIN } from '../helpers/cli-process.js';

export interface DaemonExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliChild {
  readonly child: ChildProcess;
  readonly exited: Promise<DaemonExit>;
  /** The last 200 KB the process wrote (all of it is appended to the log file). */
  output(): string;
  /**
   * Whether the process ever wrote "daemon running" (its ready line): kept as a flag, since a
   * busy replica's ready line leaves the 200 KB tail of `output()` within a minute (chaos run 15:
   * every step of a rolling restart waited its whole 60 s for a ready line no longer in view).
   */
  ready(): boolean;
}

const READY_LINE = 'daemon running';

/**
 * Runs the built CLI as a child process (so SIGKILL is a real kill -9), appending stdout and
 * stderr to `logFile`: the secret scan reads every byte any run printed.
 */
export function startCli(args: string[], options: { env: Record<string, string>; logFile: string; cwd: string }): CliChild {
  assertBuilt();
  return startCliAt(CLI_BIN, args, options);
}

/** startCli for the CLI at `bin` (the bench runs the one under dist/ from dist/bench/). */
export function startCliAt(bin: string, args: string[], options: { env: Record<string, string>; logFile: string; cwd: string }): CliChild {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = fs.createWriteStream(options.logFile, { flags: 'a' });
  log.write(`\n===== ${new Date().toISOString()} freight-sync ${args.join(' ')}\n`);
  let text = '';
  let ready = false;
  // Only the tail is kept in memory; the file has it all.
  const keep = (d: Buffer) => {
    log.write(d);
    text = (text + d.toString()).slice(-200_000);
    // The whole tail, not the chunk: the line may come split across two chunks.
    ready ||= text.includes(READY_LINE);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<DaemonExit>((resolve) =>
    child.on('close', (code, signal) => {
      log.end(() => resolve({ code, signal }));
    }),
  );
  return { child, exited, output: () => text, ready: () => ready };
}

/** Waits for `exited`, or SIGKILLs the child after `ms` and reports that as a timeout. */
export async function exitWithin(run: CliChild, ms: number): Promise<DaemonExit & { timedOut: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  const first = await Promise.race([run.exited, timeout]);
  clearTimeout(timer);
  if (first !== 'timeout') return { ...first, timedOut: false };
  run.child.kill('SIGKILL');
  return { ...(await run.exited), timedOut: true };
}
