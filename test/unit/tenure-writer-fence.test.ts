import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { leaseScope, TenureWriterFence } from '../../src/app/tenure-writer-fence.js';
import type { Fence } from '../../src/state/leases/index.js';

const fence: Fence = { account: 'acme', holder: 'vm:1:x', epoch: 4 };
const postgres = (url: string) => ({ kind: 'postgres' as const, url, schema: 'fs_acme', poolSize: 2 });

describe('lease scope of a drop writer lock', () => {
  it('names the lease row: its store, schema and key — with this host where the store is this host\'s own', () => {
    const host = os.hostname();
    expect(leaseScope({ kind: 'sqlite', path: 'state/sync.db' }, fence)).toBe(`sqlite:${host}:${path.resolve('state/sync.db')}#acme`);
    expect(leaseScope(postgres('postgres://sync:secret@db.internal:5432/freight'), fence)).toBe('postgres:db.internal:5432/freight/fs_acme#acme');
    expect(leaseScope(postgres('postgres://sync:secret@127.0.0.1:5432/freight'), fence)).toBe(`postgres:${host}:127.0.0.1:5432/freight/fs_acme#acme`);
    expect(leaseScope(postgres('postgres://localhost/freight'), fence)).toBe(`postgres:${host}:localhost/freight/fs_acme#acme`);
    expect(leaseScope(postgres('postgres:///freight?host=/var/run/postgresql'), fence)).toBe(`postgres:${host}:/freight/fs_acme#acme`);
    // Several accounts: the lease rows live in the shared schema.
    expect(leaseScope(postgres('postgres://db.internal/freight'), { ...fence, leaseSchema: 'fs_shared' })).toBe('postgres:db.internal/freight/fs_shared#acme');
  });

  it('never carries the password', () => {
    expect(leaseScope(postgres('postgres://sync:secret@db.internal:5432/freight'), fence)).not.toContain('secret');
  });

  it('gives connectors the current tenure, with its own held()', () => {
    const fences = new TenureWriterFence({ kind: 'sqlite', path: '/tmp/x.db' });
    expect(fences.get()).toBeUndefined();
    let held = true;
    fences.begin(fence, () => held);
    expect(fences.get()).toMatchObject({ epoch: 4 });
    expect(fences.get()!.held()).toBe(true);
    held = false;
    expect(fences.get()!.held()).toBe(false);
    fences.begin({ ...fence, epoch: 6 }, () => true);
    expect(fences.get()).toMatchObject({ epoch: 6 });
  });
});
