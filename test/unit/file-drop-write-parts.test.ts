import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalTarget, writeAllParts } from '../../connectors/file-drop/local-target.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'write-parts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('staging a file from parts in memory (one writev)', () => {
  it('writes the parts in order, with their sha256 and size', async () => {
    const parts = [Buffer.from('index\n'), Buffer.alloc(0), Buffer.from('head,'), Buffer.from('body'.repeat(50_000))];
    const target = new LocalTarget();
    const staged = await target.stage(dir, 'page.1', parts, new AbortController().signal);
    await target.commit(staged);
    const whole = Buffer.concat(parts);
    expect(readFileSync(path.join(dir, 'page.1'))).toEqual(whole);
    expect(staged.bytes).toBe(whole.length);
    expect(staged.sha256).toBe(createHash('sha256').update(whole).digest('hex'));
    // One buffer (markers, lock files) goes the same way; its digest too is computed when read.
    const one = await target.stage(dir, 'marker', whole, new AbortController().signal);
    await target.commit(one);
    expect(readFileSync(path.join(dir, 'marker'))).toEqual(whole);
    expect({ bytes: one.bytes, sha256: one.sha256 }).toEqual({ bytes: whole.length, sha256: createHash('sha256').update(whole).digest('hex') });
  });

  it('goes on after partial writes, and fails on a write of nothing', async () => {
    const written: Buffer[] = [];
    const trickle = {
      writev: async (buffers: Buffer[]) => {
        // At most 7 bytes per call: ends inside a part, on a part's end, across parts.
        let room = 7;
        for (const b of buffers) {
          const n = Math.min(room, b.length);
          written.push(b.subarray(0, n));
          room -= n;
          if (room === 0) break;
        }
        return { bytesWritten: 7 - room, buffers };
      },
    } as unknown as FileHandle;
    const parts = [Buffer.from('abc'), Buffer.from('defghijklmnop'), Buffer.from(''), Buffer.from('q'), Buffer.from('rstuvwxyz0123')];
    await writeAllParts(trickle, parts);
    expect(Buffer.concat(written).toString()).toBe('abcdefghijklmnopqrstuvwxyz0123');
    const stuck = { writev: async () => ({ bytesWritten: 0 }) } as unknown as FileHandle;
    await expect(writeAllParts(stuck, [Buffer.from('x')])).rejects.toMatchObject({ code: 'EIO' });
  });
});
