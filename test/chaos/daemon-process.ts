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
  /** Everything the process wrote so far (also appended to the log file). */
  output(): string;
}

/**
 * Runs the built CLI as a child process (so SIGKILL is a real kill -9), appending stdout and
 * stderr to `logFile`: the secret scan reads every byte any run printed.
 */
export function startCli(args: string[], options: { env: Record<string, string>; logFile: string; cwd: string }): CliChild {
  assertBuilt();
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = fs.createWriteStream(options.logFile, { flags: 'a' });
  log.write(`\n===== ${new Date().toISOString()} freight-sync ${args.join(' ')}\n`);
  let text = '';
  // Only the tail is kept in memory; the file has it all.
  const keep = (d: Buffer) => {
    log.write(d);
    text = (text + d.toString()).slice(-200_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<DaemonExit>((resolve) =>
    child.on('close', (code, signal) => {
      log.end(() => resolve({ code, signal }));
    }),
  );
  return { child, exited, output: () => text };
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
