import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The compiled CLI (`npm test` builds first through `pretest`). */
export const CLI_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/src/cli/bin.js');

export function assertBuilt(): void {
  if (!fs.existsSync(CLI_BIN)) throw new Error(`${CLI_BIN} is missing: run "npm run build" first (npm test does it)`);
}

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs the CLI as a real child process (so it can be killed with SIGKILL). */
export function runCli(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): CliRun {
  assertBuilt();
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Polls `check` every 50 ms until it holds; throws naming `what` after `ms`. */
export async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function hasEnded(run: CliRun): boolean {
  return run.child.exitCode !== null || run.child.signalCode !== null;
}

/** For afterEach: SIGKILL a process this test started (by its handle) when a failed assertion left it running. */
export async function killIfRunning(run: CliRun | undefined): Promise<void> {
  if (!run || hasEnded(run)) return;
  run.child.kill('SIGKILL');
  await run.exited;
}
