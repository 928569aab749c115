import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { assertBuilt, CLI_BIN } from '../helpers/cli-process.js';

const MODULE = pathToFileURL(path.join(path.dirname(CLI_BIN), 'young-generation.js')).href;

/**
 * A process that caps its young generation as the CLI does, then allocates the way a backfill
 * does (a window of live records while garbage streams through, the event loop turning between
 * pages), and prints the size of its new space in bytes.
 */
const WORKLOAD = `
import { getHeapSpaceStatistics } from 'node:v8';
import { capYoungGeneration } from ${JSON.stringify(MODULE)};
capYoungGeneration();
let live = [];
for (let page = 0; page < 400; page++) {
  for (let i = 0; i < 5000; i++) live.push({ id: page * 5000 + i, text: 'record ' + i + ' of page ' + page });
  if (live.length > 40000) live = live.slice(20000);
  await new Promise((resolve) => setImmediate(resolve));
}
process.stdout.write(String(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size));
`;

function newSpaceBytes(semiSpaceMiB: string): number {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', WORKLOAD], {
    env: { ...process.env, FREIGHT_SYNC_SEMI_SPACE_MIB: semiSpaceMiB },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`workload exited ${run.status}: ${run.stderr}`);
  return Number(run.stdout);
}

describe('young generation cap (real V8)', () => {
  it('keeps the new space at two semi-spaces of the cap, where V8 alone grows it further', () => {
    assertBuilt();
    const mib = 1024 * 1024;
    expect(newSpaceBytes('0')).toBeGreaterThan(8 * mib);
    expect(newSpaceBytes('4')).toBeLessThanOrEqual(8 * mib);
  });
});
