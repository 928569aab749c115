import { describe, expect, it } from 'vitest';
import { dataFileName, errorsFileName, safeFileComponent, tempFileName } from '../../connectors/file-drop/file-names.js';

/**
 * Security pass (docs/security.md): file names built from data — table names from mappings, batch
 * ids from windows and keys, reference numbers with `/` or `..` — never leave the drop folder,
 * never become hidden or temp files, and never collide after sanitising.
 */
describe('file names derived from data', () => {
  const hostile = ['../../etc/passwd', 'M/123', '..', '.hidden', 'a\\b', 'C:\\x', 'loads\u0000.csv', 'x'.repeat(300), 'M00000001.errors'];

  it.each(hostile)('%j stays a plain name in the folder', (text) => {
    for (const name of [safeFileComponent(text), dataFileName(text, text), errorsFileName('loads', text)]) {
      expect(name).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/);
      expect(name).not.toContain('..');
      expect(Buffer.byteLength(name)).toBeLessThan(255);
    }
  });

  it('keeps different inputs apart after sanitising', () => {
    expect(safeFileComponent('M/123')).not.toBe(safeFileComponent('M_123'));
    expect(safeFileComponent('a..b')).not.toBe(safeFileComponent('a_b'));
  });
});

describe('temp file names', () => {
  it('are hidden, name their file, and end in 12 random hex digits: unique per attempt', () => {
    const names = Array.from({ length: 2000 }, () => tempFileName('20261126T000000Z-000001.000001.page'));
    for (const name of names) expect(name).toMatch(/^\.tmp-20261126T000000Z-000001\.000001\.page-[0-9a-f]{12}$/);
    expect(new Set(names).size).toBe(names.length);
    // Random, not a counter: the digits vary in every position.
    for (let i = 0; i < 12; i++) expect(new Set(names.map((n) => n.at(-12 + i))).size).toBeGreaterThan(8);
  });
});
