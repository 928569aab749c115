import { z } from 'zod';

/** What the manifest says of one table of a batch (and a staged page of its part). */
export interface TableInfo {
  readonly table: string;
  readonly streams: readonly string[];
  /** The stream's root (parent) table; the table itself for the root. Children are replaced per root key. */
  readonly root: string;
  /** The table's key columns (the root's: one column in the default mappings, `record_key` mostly). */
  readonly key: readonly string[];
  readonly rows: number;
}

/** One table's part of a staged page: the CSV lines (no header) and the header the file starts with. */
export interface ChunkTable extends TableInfo {
  /** BOM and header line as the table's file starts (empty without header and BOM). */
  readonly head: Buffer;
  /** The rows' CSV lines, encoded as configured. */
  readonly body: Buffer;
}

const indexSchema = z.object({
  v: z.literal(1),
  tables: z.array(
    z.object({
      table: z.string().min(1),
      streams: z.array(z.string()),
      root: z.string().min(1),
      key: z.array(z.string()),
      rows: z.number().int().nonnegative(),
      head: z.number().int().nonnegative(),
      body: z.number().int().nonnegative(),
    }),
  ),
});

/**
 * A staged page is ONE file holding every table of the page, so it is written and renamed into
 * the staging folder atomically: a page is staged whole or not at all, and a parent row is never
 * staged without its child rows. Layout: a JSON index line (tables, row counts, byte lengths),
 * then each table's head and body bytes in index order. Returned as its parts (staged as a
 * stream), so the page is never copied into one more buffer.
 */
export function encodeChunk(tables: readonly ChunkTable[]): Buffer[] {
  const index = { v: 1, tables: tables.map((t) => ({ table: t.table, streams: t.streams, root: t.root, key: t.key, rows: t.rows, head: t.head.length, body: t.body.length })) };
  return [Buffer.from(`${JSON.stringify(index)}\n`, 'utf8'), ...tables.flatMap((t) => [t.head, t.body])];
}

/** A table's part of a staged page and where its bytes (head, then body) are in the page file. */
export interface PartLayout extends TableInfo {
  readonly at: number;
  readonly headBytes: number;
  readonly bodyBytes: number;
}

/** Where `encodeChunk(tables)` puts each table: known to the writer that staged the page, so publishing reads only those bytes. */
export function chunkLayout(parts: readonly Buffer[], tables: readonly ChunkTable[]): PartLayout[] {
  let at = parts[0]!.length;
  return tables.map((t) => {
    const part = { table: t.table, streams: t.streams, root: t.root, key: t.key, rows: t.rows, at, headBytes: t.head.length, bodyBytes: t.body.length };
    at += t.head.length + t.body.length;
    return part;
  });
}

export function decodeChunk(content: Buffer, where: string): ChunkTable[] {
  const newline = content.indexOf(0x0a);
  if (newline < 0) throw new Error(`${where}: staged page has no index line`);
  let index: z.output<typeof indexSchema>;
  try {
    index = indexSchema.parse(JSON.parse(content.subarray(0, newline).toString('utf8')));
  } catch (error) {
    throw new Error(`${where}: staged page index cannot be read: ${(error as Error).message}`, { cause: error });
  }
  let at = newline + 1;
  const tables = index.tables.map((t) => {
    const head = content.subarray(at, at + t.head);
    const body = content.subarray(at + t.head, at + t.head + t.body);
    at += t.head + t.body;
    return { table: t.table, streams: t.streams, root: t.root, key: t.key, rows: t.rows, head, body };
  });
  if (at !== content.length) throw new Error(`${where}: staged page is ${content.length} bytes, its index describes ${at}`);
  return tables;
}

/** Where each table of the staged page `content` is, as `chunkLayout` says it, `offset` added (the page's place in its file). */
export function decodeLayout(content: Buffer, where: string, offset: number): PartLayout[] {
  return decodeChunk(content, where).map((t) => ({
    table: t.table,
    streams: t.streams,
    root: t.root,
    key: t.key,
    rows: t.rows,
    at: offset + (t.head.byteOffset - content.byteOffset),
    headBytes: t.head.length,
    bodyBytes: t.body.length,
  }));
}
