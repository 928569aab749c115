import fs from 'node:fs/promises';
import path from 'node:path';

/** Refuses larger files: they would bloat the outbox and are unlikely to be accepted by the API. */
export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;

/**
 * Reads the file of a document command. `file` is relative to the folder of the inbox file that
 * carries the request; absolute paths and paths leaving that folder are refused, so a request
 * cannot make the daemon upload arbitrary files of the host.
 */
export async function readAttachment(file: string, folder: string | undefined): Promise<{ ok: true; bytes: Buffer; fileName: string } | { ok: false; error: string }> {
  if (!folder) return { ok: false, error: `file: "${file}" cannot be read for this source (not a local folder); send file_base64 with file_name instead` };
  if (path.isAbsolute(file) || /^[a-zA-Z]:[\\/]/.test(file)) return { ok: false, error: `file: "${file}" must be relative to the inbox folder ${folder}` };
  const root = path.resolve(folder);
  const resolved = path.resolve(root, file);
  if (resolved !== root && !resolved.startsWith(root + path.sep)) return { ok: false, error: `file: "${file}" points outside the inbox folder ${folder}` };
  try {
    const stat = await fs.stat(resolved);
    if (!stat.isFile()) return { ok: false, error: `file: "${file}" is not a file (in ${folder})` };
    if (stat.size > MAX_ATTACHMENT_BYTES) return { ok: false, error: `file: "${file}" has ${stat.size} bytes, more than the ${MAX_ATTACHMENT_BYTES} allowed` };
    return { ok: true, bytes: await fs.readFile(resolved), fileName: path.basename(resolved) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, error: `file: "${file}" ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? (error as Error).message})`} (relative to ${folder})` };
  }
}
