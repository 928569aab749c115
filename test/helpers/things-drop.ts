import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { csvOptionsSchema } from '../../connectors/csv/index.js';
import { FileDropSink, type DropSinkDeps } from '../../connectors/file-drop/drop-sink.js';
import { LocalTarget } from '../../connectors/file-drop/local-target.js';
import { mappersOf, thingsMapping } from './mappers.js';

/** A file drop of the `things` stream in `out` (default CSV options), on a local folder unless `deps` says otherwise. */
export function thingsDropSink(out: string, deps: Partial<DropSinkDeps> & Pick<DropSinkDeps, 'logger'>): FileDropSink {
  return new FileDropSink({
    target: new LocalTarget(),
    directory: out,
    options: csvOptionsSchema.parse({ directory: 'out' }),
    mappings: mappersOf([['things', thingsMapping]]),
    ...deps,
  });
}

/** Every row of every published `things` file in `out`, in batch order. */
export async function publishedThingRows(out: string): Promise<Record<string, string>[]> {
  const files = (await readdir(out)).filter((n) => n.endsWith('-things.csv')).sort();
  const rows: Record<string, string>[] = [];
  for (const file of files) rows.push(...(parse(await readFile(path.join(out, file)), { columns: true, bom: true }) as Record<string, string>[]));
  return rows;
}
