import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The parts of a `.cpuprofile` (V8's format) this summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Where a sample's time goes: the first frame from the leaf up whose file matches. Node's own
 * code (fs, crypto, buffers) counts for the project code that called it, so "file staging" holds
 * the opens, writes and fsyncs the CSV sink asks for.
 */
const PARTS: readonly (readonly [string, RegExp])[] = [
  ['CSV encoding', /file-drop\/encode-csv/],
  ['mapping', /src\/mapping\//],
  ['content hash (JSON.stringify, sha1)', /content-hash|record-json/],
  ['JSON parse and validation', /json-body|schemas\/|api\/paging|zod/],
  ['file staging and publishing', /connectors\/file-drop\//],
  ['SQLite state (Kysely, better-sqlite3)', /src\/state\/|kysely|better-sqlite3/],
  ['HTTP (axios, node:http)', /axios|http-transport|http-exchange|response-decoding|proxied-transport|write-gate|follow-redirects|_http_|node:net|proxy-from-env|form-data/],
  ['API client', /src\/api\//],
  ['sync engine', /src\/sync\/|src\/outbound\//],
  ['module loading (start-up)', /esm\/|modules\//],
];

/** Busy time of one profile by part, in ms (idle time left out). */
export function summariseProfile(profile: CpuProfile): { busyMs: number; parts: Map<string, number> } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const parts = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const micros = profile.timeDeltas[i + 1] ?? 0;
    const leaf = nodes.get(id)!;
    const name = leaf.callFrame.functionName;
    if (name === '(idle)') return;
    busy += micros;
    let part = name === '(garbage collector)' ? 'garbage collection' : name === '(program)' ? 'V8 (program)' : undefined;
    for (let at: number | undefined = id; !part && at !== undefined; at = parent.get(at)) {
      const url = nodes.get(at)!.callFrame.url;
      part = PARTS.find(([, pattern]) => pattern.test(url))?.[0];
    }
    part ??= 'other';
    parts.set(part, (parts.get(part) ?? 0) + micros);
  });
  return { busyMs: busy / 1000, parts: new Map([...parts].map(([part, micros]) => [part, micros / 1000])) };
}

/**
 * `node dist/bench/profile-summary.js <file.cpuprofile> <pages>`: busy ms per page by part, for a
 * profile of `node --cpu-prof dist/bench/cpu-per-page.js …` (pages: the pages of all its cases).
 */
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, pagesText] = process.argv.slice(2);
  const pages = Number(pagesText);
  if (!file || !(pages > 0)) {
    process.stderr.write('usage: node dist/bench/profile-summary.js <file.cpuprofile> <pages>\n');
    process.exitCode = 2;
  } else {
    const { busyMs, parts } = summariseProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile);
    process.stdout.write(`busy ${(busyMs / pages).toFixed(2)} ms/page (main thread)\n`);
    for (const [part, ms] of [...parts].sort((a, b) => b[1] - a[1])) {
      process.stdout.write(`${(ms / pages).toFixed(2).padStart(7)} ms/page ${((100 * ms) / busyMs).toFixed(1).padStart(5)}%  ${part}\n`);
    }
  }
}
