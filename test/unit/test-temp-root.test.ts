import os from 'node:os';
import { describe, expect, it } from 'vitest';

/** The run's temporary root (test/setup/temp-root.ts) reaches the test workers: their folders are removed with it. */
describe('temporary folders of a test run', () => {
  it('are made under the run\'s own root', () => {
    const root = process.env['FREIGHT_SYNC_TEST_TMP'];
    expect(root).toMatch(/fs-test-/);
    expect(os.tmpdir()).toBe(root);
  });
});
