import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Global setup: every temporary folder of a test run goes under one root, removed when the run
 * ends. Tests (and the processes they start) make their folders with `os.tmpdir()`, which reads
 * TMPDIR; many cleaned up only on success or not at all, so each run left dozens of folders in
 * /tmp. Workers are forked after this runs and inherit TMPDIR. The root's name is short: sockets
 * and sshd paths under it stay far below the 108-byte limit of a Unix socket path.
 */
export default function setup(): () => void {
  // Each project of the config runs its global setup: the first one makes the root for all.
  if (process.env['FREIGHT_SYNC_TEST_TMP']) return () => undefined;
  const outer = process.env['TMPDIR'];
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fs-test-'));
  // As /tmp itself: the SFTP tests' sshd serves a non-root user folders made under it.
  fs.chmodSync(root, 0o1777);
  process.env['TMPDIR'] = root;
  process.env['FREIGHT_SYNC_TEST_TMP'] = root;
  return () => {
    if (outer === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = outer;
    delete process.env['FREIGHT_SYNC_TEST_TMP'];
    fs.rmSync(root, { recursive: true, force: true });
  };
}
