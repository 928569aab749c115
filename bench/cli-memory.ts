import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Peak RSS of short CLI commands (issue 14: commands load only what they use). Each command runs
 * `runs` times as a child process; bin.ts reports its peak with FREIGHT_SYNC_REPORT_RSS=1, and bare
 * `node` is measured the same way as the floor.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../src/cli/bin.js');
const EXAMPLE_CONFIG = path.resolve(here, '../../config/freight-sync.example.yaml');
/** Bare node, reporting its peak the way bin.ts does (src/cli/peak-rss.ts). */
const BARE = `import('${pathToFileURL(path.resolve(here, '../src/cli/peak-rss.js')).href}').then(({ peakRssKib }) => process.on('exit', () => process.stderr.write('freight-sync: peak-rss-kib=' + peakRssKib() + '\\n')))`;

export interface CliMemoryResult {
  command: string;
  minMiB: number;
  maxMiB: number;
  exitCode: number | null;
}

function peakMiB(args: string[]): { mib: number; code: number | null } {
  const run = spawnSync(process.execPath, args, {
    env: { ...process.env, FREIGHT_SYNC_REPORT_RSS: '1', FREIGHT_CLIENT_ID: 'bench', FREIGHT_CLIENT_SECRET: 'bench-secret' },
    encoding: 'utf8',
  });
  const match = /peak-rss-kib=(\d+)/.exec(run.stderr);
  if (!match) throw new Error(`no peak-rss line from node ${args.join(' ')}: ${run.stderr.slice(0, 500)}`);
  return { mib: Number(match[1]) / 1024, code: run.status };
}

export function benchCliMemory(runs = 3): CliMemoryResult[] {
  const commands: [string, string[]][] = [
    ['bare node (floor)', ['-e', BARE]],
    ['freight-sync --help', [CLI, '--help']],
    ['freight-sync sync --help', [CLI, 'sync', '--help']],
    ['freight-sync validate-config (example config)', [CLI, 'validate-config', '-c', EXAMPLE_CONFIG]],
  ];
  return commands.map(([command, args]) => {
    const samples = Array.from({ length: runs }, () => peakMiB(args));
    const mibs = samples.map((s) => s.mib);
    return { command, minMiB: Math.min(...mibs), maxMiB: Math.max(...mibs), exitCode: samples[0]!.code };
  });
}
