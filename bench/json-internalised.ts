import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulatorProcess } from './simulator-process.js';

/**
 * What V8's JSON.parse costs when a page's short identifiers are unique (issue 14, memory): it
 * internalises every string value of at most 10 characters — into its string table, which drops
 * them only when a full collection finds them dead. One page of 50 simulator loads is parsed `pages` times,
 * element by element as the product does, with the fields that are unique per load made unique
 * each time: once at most 10 characters long (as the simulator's and real reference numbers
 * are), once 11. Each variant runs in a child process of its own, for its peak RSS.
 *
 *   node dist/bench/json-internalised.js [pages=4000] [rounds=2]
 */
const UNIQUE_FIELDS = ['reference_number', 'shipmentNo', 'purchaseOrderNo', 'secondaryReferenceNo'];

type Variant = 'short' | 'long';

function parseRepeatedly(texts: readonly string[], pages: number, variant: Variant): { msPerPage: number } {
  const field = new RegExp(`"(${UNIQUE_FIELDS.join('|')})":"([^"]*)"`, 'g');
  let counter = 0;
  let parseNs = 0n;
  for (let page = 0; page < pages; page++) {
    for (const text of texts) {
      const unique = (counter++).toString(36);
      // The value made unique, cut to 10 characters; the long variant has one more.
      const changed = text.replace(field, (_, key: string, value: string) => `"${key}":"${(unique + value).slice(0, 10)}${variant === 'long' ? 'X' : ''}"`);
      const start = process.hrtime.bigint();
      JSON.parse(changed);
      parseNs += process.hrtime.bigint() - start;
    }
  }
  return { msPerPage: Number(parseNs) / 1e6 / pages };
}

async function fetchPage(): Promise<string[]> {
  const sim = await startSimulatorProcess({ seed: 5, loads: 50 });
  try {
    const token = await fetch(`${sim.baseUrl}/retrieve-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: sim.clientId, clientSecret: sim.clientSecret }),
    });
    const bearer = ((await token.json()) as { data: { access_token: string } }).data.access_token;
    const page = await fetch(`${sim.baseUrl}/loads?limit=50`, { headers: { authorization: `Bearer ${bearer}` } });
    return ((await page.json()) as { data: unknown[] }).data.map((load) => JSON.stringify(load));
  } finally {
    await sim.stop();
  }
}

async function main(): Promise<void> {
  const [first, ...rest] = process.argv.slice(2);
  if (first === '--child') {
    const [variant, file, pages] = rest as [Variant, string, string];
    const texts = JSON.parse(fs.readFileSync(file, 'utf8')) as string[];
    const { msPerPage } = parseRepeatedly(texts, Number(pages), variant);
    process.stdout.write(JSON.stringify({ msPerPage, peakRssMiB: process.resourceUsage().maxRSS / 1024 }));
    return;
  }
  const pages = Number(first ?? 4000);
  const rounds = Number(rest[0] ?? 2);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freight-sync-intern-'));
  try {
    const file = path.join(dir, 'page.json');
    fs.writeFileSync(file, JSON.stringify(await fetchPage()));
    process.stdout.write(`unique fields per load: ${UNIQUE_FIELDS.join(', ')}; ${pages} pages of 50 loads per run\n`);
    process.stdout.write('round  values            parse ms/page  peak RSS MiB\n');
    for (let round = 1; round <= rounds; round++) {
      for (const variant of ['short', 'long'] as const) {
        const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', variant, file, String(pages)], { encoding: 'utf8' });
        if (child.status !== 0) throw new Error(`child (${variant}) failed: ${child.stderr}`);
        const { msPerPage, peakRssMiB } = JSON.parse(child.stdout) as { msPerPage: number; peakRssMiB: number };
        const label = (variant === 'short' ? '≤ 10 characters' : '11 characters').padEnd(18);
        process.stdout.write(`${String(round).padEnd(7)}${label}${msPerPage.toFixed(3).padStart(13)}  ${peakRssMiB.toFixed(1).padStart(12)}\n`);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
