import type { FileStore, FileToStore, StoredFile } from '../../src/contracts/index.js';
import { FreightSyncError } from '../../src/util/errors.js';
import type { FileTarget } from './file-target.js';

const SAFE_FOLDER = /^(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._\-/]+$/;
const SAFE_EXTENSION = /^(\.[a-z0-9]{1,10})?$/;

/**
 * The `FileStore` capability over a connector's target (local folder or SFTP directory): the bytes
 * are staged under a temp name in the final folder while their sha256 is computed, then renamed to
 * `<sha256><extension>`. A name is its content, so renaming over an existing file of that name
 * replaces it with the same bytes: repeating a put is harmless.
 */
export class TargetFileStore implements FileStore {
  constructor(
    private readonly target: FileTarget,
    private readonly directory: string,
  ) {}

  async put(file: FileToStore, signal: AbortSignal): Promise<StoredFile> {
    // Checked here too, although the stream's options are: a plug-in boundary.
    if (!SAFE_FOLDER.test(file.folder) || file.folder.startsWith('/')) throw new FreightSyncError('FILE_STORE_INPUT', `file store: folder "${file.folder}" must be a relative path without "." or ".." segments`);
    if (!SAFE_EXTENSION.test(file.extension)) throw new FreightSyncError('FILE_STORE_INPUT', `file store: extension "${file.extension}" must be "" or a dot and 1-10 lower-case letters or digits`);
    const dir = this.target.join(this.directory, file.folder);
    await this.target.ensureDir(dir, signal);
    const staged = await this.target.stage(dir, 'file', await file.open(signal), signal);
    const name = `${staged.sha256}${file.extension}`;
    const finalPath = this.target.join(dir, name);
    try {
      await this.target.commit({ ...staged, finalPath });
      await this.target.syncDir(dir);
    } catch (error) {
      await this.target.discard(staged);
      throw error;
    }
    return { name, sha256: staged.sha256, bytes: staged.bytes, location: this.target.describe(finalPath) };
  }
}
