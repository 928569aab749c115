import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliChild } from '../test/chaos/daemon-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../src/cli/bin.js');

/** The built CLI as a child process, output appended to `logFile` (the test helper resolves the CLI from test/). */
export function startBuiltCli(args: string[], options: { env: Record<string, string>; logFile: string; cwd: string }): CliChild {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = fs.createWriteStream(options.logFile, { flags: 'a' });
  let text = '';
  const keep = (d: Buffer) => {
    log.write(d);
    text = (text + d.toString()).slice(-100_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => log.end(() => resolve({ code, signal }))));
  return { child, exited, output: () => text };
}

export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

