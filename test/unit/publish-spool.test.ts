import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSpoolDir, removeOrphanSpools } from '../../connectors/file-drop/publish-spool.js';

/**
 * An SFTP drop spools a batch's tables in the local temp folder while it publishes; a process
 * killed then leaves the spool behind (chaos runs left one per kill). The next start removes those
 * of processes that no longer run — never a live process's, nor anything else in the folder.
 */
describe('publish spool folders', () => {
  it('are named with the pid, and a dead process\'s are removed at the next start; a live one\'s and other folders stay', async () => {
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'spool-test-'));
    const mine = await createSpoolDir(tmp);
    expect(path.basename(mine)).toMatch(new RegExp(`^freight-sync-publish-${process.pid}-`));
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    const dead = path.join(tmp, `freight-sync-publish-${deadPid}-AbC123`);
    await mkdir(dead);
    await writeFile(path.join(dead, '0.csv'), 'id\n1\n');
    // A live process other than this one: the test runner's parent.
    const live = path.join(tmp, `freight-sync-publish-${process.ppid}-XyZ789`);
    await mkdir(live);
    const legacy = path.join(tmp, 'freight-sync-publish-Qw12Er');
    await mkdir(legacy);
    await mkdir(path.join(tmp, 'something-else'));

    expect(await removeOrphanSpools(tmp)).toEqual([dead]);
    expect((await readdir(tmp)).sort()).toEqual([path.basename(mine), path.basename(live), path.basename(legacy), 'something-else'].sort());
  });
});
