import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/cli/bin.js');

export interface SimulatorProcess {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  stop(): Promise<void>;
}

/**
 * `freight-sync simulate` in its own process: the server's CPU then runs beside the client's,
 * as a remote API would, instead of sharing the client's event loop.
 */
export async function startSimulatorProcess(args: { loads: number; seed: number }): Promise<SimulatorProcess> {
  const child: ChildProcess = spawn(process.execPath, [CLI, 'simulate', '--port', '0', '--loads', String(args.loads), '--seed', String(args.seed)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`simulator did not start: ${out}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /base URL:\s+(\S+)/.exec(out);
      if (match && /client secret:\s+\S+/.test(out)) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`simulator exited ${code}: ${out}`)));
  });
  const clientId = /client id:\s+(\S+)/.exec(out)![1]!;
  const clientSecret = /client secret:\s+(\S+)/.exec(out)![1]!;
  return {
    baseUrl,
    clientId,
    clientSecret,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
