import { META_COLUMN_NOTE, type DiscoveredStream } from '../app/discover.js';
import type { StreamSample } from '../app/discover-sample.js';
import { META_COLUMNS, RAW_COLUMN } from '../contracts/index.js';
import { renderTable } from './table.js';

/** One line per stream and variant: key, cursor, tables with their column counts. */
export function renderStreamList(streams: readonly DiscoveredStream[]): string {
  let out = '';
  for (const variant of [...new Set(streams.map((s) => s.variant))]) {
    const ofVariant = streams.filter((s) => s.variant === variant);
    out += `${out ? '\n' : ''}${variant} (${ofVariant.length} stream${ofVariant.length === 1 ? '' : 's'})\n`;
    out += renderTable(
      ['stream', 'key', 'cursor', 'tables (columns)'],
      ofVariant.map((s) => [s.stream, s.key, s.cursor, s.tables.map((t) => `${t.table} (${t.columns.length})`).join(', ')]),
    );
  }
  return out;
}

/** Each stream's default mapping column by column. */
export function renderStreamColumns(streams: readonly DiscoveredStream[]): string {
  return streams
    .map((s) => {
      let out = `${s.stream} on ${s.variant}: ${s.description}\nkey: ${s.key}; cursor: ${s.cursor}\n`;
      for (const table of s.tables) {
        const where = table.parent ? `, one row per element of ${table.path} of ${table.parent}` : '';
        out += `\ntable ${table.table} (key ${table.key.join(', ')}${where})\n`;
        out += renderTable(['column', 'type', 'source'], table.columns.map((c) => [c.key ? `${c.name} *` : c.name, c.type, c.source]));
      }
      return `${out}(* key column; ${META_COLUMN_NOTE})\n`;
    })
    .join('\n');
}

const HIDDEN = new Set<string>([...META_COLUMNS, RAW_COLUMN]);

/** Sampled records, each as its mapped rows (column and value, meta columns and `_raw` left out) and, with `raw`, its JSON. */
export function renderSamples(samples: readonly StreamSample[], options: { raw: boolean }): string {
  const out: string[] = [];
  for (const sample of samples) {
    if (sample.error) {
      out.push(`${sample.stream}: FAILED: ${sample.error}`);
      continue;
    }
    const from = sample.endpoint ? ` from ${sample.endpoint}` : '';
    out.push(`${sample.stream}: ${sample.records.length} record${sample.records.length === 1 ? '' : 's'}${from}${sample.note ? ` (${sample.note})` : ''}`);
    sample.records.forEach((record, i) => {
      out.push(`\n  record ${i + 1} of ${sample.records.length}: key ${record.key} (${record.op})`);
      if (options.raw) out.push(JSON.stringify(record.raw, null, 2).replace(/^/gm, '    '));
      for (const mapped of record.mapped) {
        for (const error of mapped.errors) out.push(`    ${mapped.mapping}: REFUSED: ${error}`);
        for (const table of mapped.tables) {
          table.rows.forEach((row, r) => {
            const label = table.rows.length === 1 ? '' : ` row ${r + 1} of ${table.rows.length}`;
            out.push(`    ${mapped.mapping} → ${table.table}${label}`);
            const cells = Object.entries(row).filter(([column]) => !HIDDEN.has(column));
            out.push(renderTable(['column', 'value'], cells.map(([column, value]) => [column, value === null ? 'null' : String(value)])).trimEnd().replace(/^/gm, '      '));
          });
        }
      }
    });
    out.push('');
  }
  return `${out.join('\n')}\n`;
}
