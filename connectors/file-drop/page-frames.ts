import { crc32 } from 'node:zlib';

/**
 * A batch's staged pages in one append-only file (`<batch>.<segment>.pages`), one frame per
 * page: a 16-byte header — magic `FSP1`, the page's number, the payload's length, a CRC-32 over
 * those 12 header bytes and the payload — then the payload (the page chunk, page-chunk.ts). A
 * frame is acknowledged only once its bytes are fdatasync'd; a kill between the write and the
 * sync can leave a torn last frame, which the CRC (or a short read) finds and recovery drops:
 * it was never acknowledged, so nothing acknowledged is lost.
 */
export const FRAME_HEADER_BYTES = 16;
const MAGIC = 0x46535031; // "FSP1"

/** The header of a frame holding `parts` as page `page`: prepend it to the parts. */
export function frameHeader(page: number, parts: readonly Buffer[]): Buffer {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeUInt32BE(MAGIC, 0);
  header.writeUInt32BE(page, 4);
  header.writeUInt32BE(
    parts.reduce((sum, part) => sum + part.length, 0),
    8,
  );
  let crc = crc32(header.subarray(0, 12));
  for (const part of parts) crc = crc32(part, crc);
  header.writeUInt32BE(crc, 12);
  return header;
}

/** What a frame's header says, or undefined when the bytes are not a frame header (a torn tail, or not this format). */
export function readFrameHeader(header: Buffer): { page: number; length: number; crc: number } | undefined {
  if (header.length < FRAME_HEADER_BYTES || header.readUInt32BE(0) !== MAGIC) return undefined;
  return { page: header.readUInt32BE(4), length: header.readUInt32BE(8), crc: header.readUInt32BE(12) };
}

/** Whether `payload` is the payload the header's CRC was computed over. */
export function frameIntact(header: Buffer, payload: Buffer): boolean {
  const said = readFrameHeader(header);
  return said !== undefined && payload.length === said.length && crc32(payload, crc32(header.subarray(0, 12))) === said.crc;
}
