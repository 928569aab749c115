import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCliAt, type CliChild } from '../test/chaos/daemon-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../src/cli/bin.js');

/** The built CLI as a child process, output appended to `logFile` (the test helper resolves the CLI from test/). */
export function startBuiltCli(args: string[], options: { env: Record<string, string>; logFile: string; cwd: string }): CliChild {
  return startCliAt(CLI, args, options);
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

