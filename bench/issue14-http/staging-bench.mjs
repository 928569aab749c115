// Issue 14 (CPU, pass 5) scratch driver, not part of npm run bench; see bench/results-cpu.md, "pass 5".
// CPU per staged page: today's per-page file (open wx, writev, fsync, close, rename, folder open+fsync+close)
// against appending the page to one open batch file (one writev + fdatasync). Alternated, same page bytes.
import { open, rename, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
const pages = Number(process.argv[2] ?? 200), rounds = Number(process.argv[3] ?? 6);
const dir = await mkdtemp(path.join(os.tmpdir(), 'staging-bench-'));
const parts = [Buffer.alloc(64, 1), Buffer.alloc(120, 2), randomBytes(250_000), Buffer.alloc(80, 3), randomBytes(40_000)];
async function perPageFiles(round) {
  for (let p = 0; p < pages; p++) {
    const temp = path.join(dir, `.${round}.${p}.tmp`), final = path.join(dir, `${round}.${p}.page`);
    const h = await open(temp, 'wx', 0o644);
    await h.writev(parts);
    await h.sync();
    await h.close();
    await rename(temp, final);
    const d = await open(dir, 'r');
    await d.sync();
    await d.close();
  }
}
async function appendLog(round) {
  const h = await open(path.join(dir, `${round}.batch`), 'a', 0o644);
  for (let p = 0; p < pages; p++) {
    const frame = Buffer.alloc(16); // length + checksum header of the page
    await h.writev([frame, ...parts]);
    await h.datasync();
  }
  await h.close();
}
const res = { files: [], append: [] };
for (let r = 0; r < rounds; r++) {
  for (const [name, fn] of r % 2 ? [['append', appendLog], ['files', perPageFiles]] : [['files', perPageFiles], ['append', appendLog]]) {
    const c0 = process.cpuUsage();
    await fn(`${name}${r}`);
    const c = process.cpuUsage(c0);
    res[name].push((c.user + c.system) / 1000 / pages);
  }
}
await rm(dir, { recursive: true, force: true });
const s = (xs) => { const v = xs.slice(1).sort((a, b) => a - b); return `min ${v[0].toFixed(3)} median ${v[Math.floor(v.length / 2)].toFixed(3)}`; };
console.log(`CPU ms per page (${pages} pages × ${rounds} rounds, first dropped): per-page files ${s(res.files)}; append + fdatasync ${s(res.append)}`);
