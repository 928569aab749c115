import { vi } from 'vitest';
import { main } from '../../src/cli/main.js';

/**
 * Runs the CLI in this process (same parser, commands and exit codes as the binary, no build
 * needed): stdout captured, `process.exitCode` restored afterwards so the test runner's own exit
 * code is not touched.
 */
export async function runCliInProcess(args: readonly string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  });
  const before = process.exitCode;
  try {
    const code = await main(['node', 'freight-sync', ...args]);
    return { code, stdout };
  } finally {
    spy.mockRestore();
    process.exitCode = before;
  }
}
