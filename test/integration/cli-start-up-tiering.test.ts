import { execFileSync, spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI_BIN } from '../helpers/cli-process.js';

/**
 * TurboFan is held back while the CLI loads its modules and let go when a command's action starts
 * (src/cli/start-up-tiering.ts): `--help` must not page TurboFan's code in from the node binary
 * (~5 MiB on Node 22), a command that does work must still be compiled as before.
 *
 * The built CLI runs with `--trace-opt` under this machine's Node and, when
 * FREIGHT_SYNC_TEST_EXECVE_NODE names one (.ci/run fetches Node 24), a newer one: V8 11 and V8 ≥ 12
 * tier up differently. V8's threshold is lowered so that loading the CLI's modules alone makes it
 * compile (at V8's own threshold only Node 22 does, which CI does not run); the hold is switched
 * off by naming TurboFan's default on node's command line (`--turbofan`), which the CLI leaves
 * alone.
 */

const nodes = [process.execPath, process.env.FREIGHT_SYNC_TEST_EXECVE_NODE].filter(
  (node, index, all): node is string => !!node && all.indexOf(node) === index,
);

/**
 * Node flags that make TurboFan take a function after few calls, per V8 major (from 12 it counts
 * invocations; Node 24 would tier through Maglev first, which is not what is held back).
 */
function lowThreshold(node: string): string[] {
  const v8Major = Number.parseInt(execFileSync(node, ['-p', 'process.versions.v8'], { encoding: 'utf8' }), 10);
  return v8Major >= 12 ? ['--no-maglev', '--invocation-count-for-turbofan=100'] : ['--interrupt-budget=8192'];
}

/** The functions TurboFan finished compiling while the CLI ran `args`, and its exit status. */
function turbofanCompiles(node: string, nodeFlags: string[], args: string[]): { compiled: number; status: number | null; stderr: string } {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('FREIGHT_SYNC_') && name !== 'NODE_OPTIONS'));
  const run = spawnSync(node, ['--trace-opt', ...nodeFlags, CLI_BIN, ...args], { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024 });
  const compiled = run.stdout.split('\n').filter((line) => /^\[completed optimizing .*\(target TURBOFAN/.test(line)).length;
  return { compiled, status: run.status, stderr: run.stderr };
}

beforeAll(() => assertBuilt());

describe.each(nodes)('TurboFan while the CLI starts, under %s', (node) => {
  it('--help compiles (nearly) nothing with TurboFan held back; far more without the hold', () => {
    const flags = lowThreshold(node);
    const held = turbofanCompiles(node, flags, ['--help']);
    const free = turbofanCompiles(node, [...flags, '--turbofan'], ['--help']);
    expect(held.status).toBe(0);
    expect(free.status).toBe(0);
    // What is compiled while held was taken before bin.js ran (node's own start-up, bin.js's static imports).
    expect(held.compiled * 2).toBeLessThan(free.compiled);
  });

  it("a command's action gets TurboFan back", () => {
    const flags = lowThreshold(node);
    const help = turbofanCompiles(node, flags, ['--help']);
    const schema = turbofanCompiles(node, flags, ['schema']);
    expect(schema.status).toBe(0);
    expect(schema.compiled).toBeGreaterThanOrEqual(help.compiled + 10);
  });

  it('a node flag that says how to tier up is kept: --no-turbofan holds through the action', () => {
    const flags = lowThreshold(node);
    const run = turbofanCompiles(node, [...flags, '--no-turbofan'], ['schema']);
    expect(run.status).toBe(0);
    expect(run.compiled).toBe(0);
  });
});
