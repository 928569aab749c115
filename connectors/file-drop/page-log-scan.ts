import { FreightSyncError } from '../../src/util/errors.js';
import type { FileTarget, RangeReader } from './file-target.js';
import { decodeLayout } from './page-chunk.js';
import { FRAME_HEADER_BYTES, frameIntact, readFrameHeader } from './page-frames.js';
import type { StagedPage } from './publish-batch.js';

/** A page found in a page log: its number (a later copy of a number replaces an earlier one) and where its tables are. */
/** Larger than any page (50 records); a header saying more is torn bytes, not a length to allocate. */
const MAX_FRAME_BYTES = 256 * 1024 * 1024;

export interface LoggedPage {
  readonly page: number;
  readonly staged: StagedPage;
}

export interface PageLogScan {
  readonly pages: LoggedPage[];
  /** Where the intact frames end; bytes after it (a torn last frame) are left out. */
  readonly intactBytes: number;
  /** True when something follows the intact frames. */
  readonly torn: boolean;
}

/**
 * Reads a page log left by a writer that did not publish it (page-frames.ts), frame by frame, one
 * frame in memory at a time. It stops at the first frame that is short, is not a frame, or fails
 * its CRC: a kill between a frame's write and its fdatasync, so a page never acknowledged. A frame
 * whose CRC holds but whose page cannot be decoded is not a torn write: that throws, naming the
 * file and offset, rather than dropping a page that was acknowledged.
 */
export async function scanPageLog(target: FileTarget, stagingDir: string, name: string): Promise<PageLogScan> {
  if (!target.openRangeReader) throw new Error(`${target.describe(target.join(stagingDir, name))}: page logs need a target that reads byte ranges`);
  const file = target.join(stagingDir, name);
  const reader = await target.openRangeReader(file);
  try {
    return await scanFrames(target, reader, file, name);
  } finally {
    await reader.close();
  }
}

async function scanFrames(target: FileTarget, reader: RangeReader, file: string, name: string): Promise<PageLogScan> {
  const pages: LoggedPage[] = [];
  const headerScratch = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  let scratch: Buffer = Buffer.allocUnsafe(512 * 1024);
  let at = 0;
  for (;;) {
    const header = await reader.read(at, FRAME_HEADER_BYTES, headerScratch);
    if (header.length === 0) return { pages, intactBytes: at, torn: false };
    const said = header.length === FRAME_HEADER_BYTES ? readFrameHeader(header) : undefined;
    if (!said || said.length > MAX_FRAME_BYTES) return { pages, intactBytes: at, torn: true };
    const payload = await reader.read(at + FRAME_HEADER_BYTES, said.length, scratch);
    if (payload.length > scratch.length) scratch = payload;
    if (!frameIntact(header, payload)) return { pages, intactBytes: at, torn: true };
    let parts;
    try {
      parts = decodeLayout(payload, `${target.describe(file)} at byte ${at}`, at + FRAME_HEADER_BYTES);
    } catch (error) {
      // Intact bytes that are not a page: not a torn write, so not dropped silently. The operator
      // decides: moving the file out of the staging folder lets the drop start without its pages.
      throw new FreightSyncError(
        'DROP_PAGE_LOG_UNREADABLE',
        `${(error as Error).message}; the frame's checksum holds, so this is not a torn write. The CSV drop does not start while it is there: move ${target.describe(file)} out of the staging folder to start without its pages (those records are then not in the drop; a backfill of their range writes them again)`,
        { cause: error },
      );
    }
    pages.push({ page: said.page, staged: { file: name, parts } });
    at += FRAME_HEADER_BYTES + said.length;
  }
}
