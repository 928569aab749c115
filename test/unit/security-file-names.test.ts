import { describe, expect, it } from 'vitest';
import { dataFileName, errorsFileName, safeFileComponent } from '../../connectors/file-drop/file-names.js';

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
