import { createHash } from 'node:crypto';
import { mix32 } from './prng.js';

/** A document file the storage server serves (spec §2.7: a load document is `{ type, url }`). */
export interface SimDocument {
  /** Path on the storage origin, `/loads/<load _id>/<n>-<file name>`. */
  path: string;
  url: string;
  referenceNumber: string;
  loadId: string;
  type: string;
  bytes: number;
  /** Removed from its load (as a TMS user deleting it would): the URL answers 404. */
  removed: boolean;
}

/** What the truth reports per document: the checksum a client's stored file must have. */
export interface DocumentTruth {
  reference_number: string;
  load_id: string;
  type: string;
  url: string;
  bytes: number;
  sha256: string;
  removed: boolean;
}

const BLOCK = 64 * 1024;
const PDF_HEADER = Buffer.from('%PDF-1.4\n% freight-sim document\n');

/**
 * The files behind load documents. Real document URLs point at object storage on another host,
 * so the simulator serves them from a second listener (document-storage.ts), a different origin
 * than the API: a client that sends its bearer token there is caught by `stats.documentDownloads`.
 * Content is a pure function of (seed, path, size): no bytes are kept, a 100 MB file streams in
 * 64 KiB blocks, and the checksum is recomputed the same way for the truth.
 */
export class SimDocuments {
  /** `http://127.0.0.1:<storage port>`; set once the storage server listens. */
  origin = '';
  private readonly byPath = new Map<string, SimDocument>();
  /** Answer this many next downloads with 503 (failing storage; the client must retry). */
  failNext = 0;

  constructor(private readonly seed: number) {}

  add(spec: { referenceNumber: string; loadId: string; type: string; fileName: string; bytes: number; ordinal: number }): SimDocument {
    const path = `/loads/${encodeURIComponent(spec.loadId)}/${spec.ordinal}-${encodeURIComponent(spec.fileName || 'upload')}`;
    const doc: SimDocument = { path, url: `${this.origin}${path}`, referenceNumber: spec.referenceNumber, loadId: spec.loadId, type: spec.type, bytes: spec.bytes, removed: false };
    this.byPath.set(path, doc);
    return doc;
  }

  byUrl(url: string): SimDocument | undefined {
    return url.startsWith(this.origin) ? this.byPath.get(url.slice(this.origin.length)) : undefined;
  }

  at(path: string): SimDocument | undefined {
    return this.byPath.get(path);
  }

  /** The bytes, block by block. */
  *content(doc: SimDocument): Generator<Buffer> {
    let state = mix32(this.seed ^ mix32(hashText(doc.path)));
    for (let offset = 0; offset < doc.bytes; offset += BLOCK) {
      const length = Math.min(BLOCK, doc.bytes - offset);
      // BLOCK is a multiple of 4, so every block but the last is whole words.
      const block = Buffer.allocUnsafe(Math.ceil(length / 4) * 4);
      for (let i = 0; i < block.length; i += 4) {
        state = mix32(state + 0x6d2b79f5);
        block.writeUInt32LE(state, i);
      }
      if (offset === 0) PDF_HEADER.copy(block, 0, 0, Math.min(PDF_HEADER.length, length));
      yield block.subarray(0, length);
    }
  }

  sha256(doc: SimDocument): string {
    const hash = createHash('sha256');
    for (const block of this.content(doc)) hash.update(block);
    return hash.digest('hex');
  }

  truthOf(doc: SimDocument): DocumentTruth {
    return { reference_number: doc.referenceNumber, load_id: doc.loadId, type: doc.type, url: doc.url, bytes: doc.bytes, sha256: this.sha256(doc), removed: doc.removed };
  }

  *truth(): Generator<DocumentTruth> {
    for (const doc of this.byPath.values()) yield this.truthOf(doc);
  }
}

function hashText(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
