import { describe, expect, it } from 'vitest';
import { registerSecret } from '../../src/util/secrets.js';
import { takeLeaks } from '../setup/secret-guard.js';

describe('secret guard (test/setup/secret-guard.ts)', () => {
  it('lets output without secrets through', () => {
    process.stdout.write('nothing secret here\n');
    expect(takeLeaks()).toEqual([]);
  });

  it('records (and masks) a registered secret written to stderr or the console', () => {
    registerSecret('guard-probe-secret-7c1e');
    process.stderr.write('oops guard-probe-secret-7c1e\n');
    console.log({ leaked: 'guard-probe-secret-7c1e' });
    const leaks = takeLeaks();
    // Taken here, so the guard's afterEach does not fail this test; any other test would fail.
    expect(leaks).toHaveLength(2);
    expect(leaks.join('\n')).not.toContain('guard-probe-secret-7c1e');
  });
});
