// Loaded into the child with --import: CPU time at exit, process.memoryUsage() and V8 space sizes each second
// (MEM_TRACE=file), /proc/self/smaps (and with HEAPSNAP=1 a heap snapshot) at SMAPS_AT seconds.
import fs from 'node:fs';
import v8 from 'node:v8';
process.on('exit', () => {
  const c = process.cpuUsage();
  process.stderr.write(`child-cpu-ms=${Math.round((c.user + c.system) / 1000)}\n`);
});
const out = process.env.MEM_TRACE;
if (out) {
  const t0 = Date.now();
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const mib = (x) => +(x / 1048576).toFixed(1);
    fs.appendFileSync(out, JSON.stringify({ t: (Date.now() - t0) / 1000, rss: mib(m.rss), heapTotal: mib(m.heapTotal), heapUsed: mib(m.heapUsed), external: mib(m.external), arrayBuffers: mib(m.arrayBuffers), spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((x) => [x.space_name.replace('_space',''), [mib(x.space_size), mib(x.space_used_size)]])) }) + '\n');
  }, 1000);
  timer.unref();
}
for (const at of (process.env.SMAPS_AT ?? '').split(',').filter(Boolean)) {
  setTimeout(() => {
    try { fs.writeFileSync(`${process.env.SMAPS_PREFIX ?? 'smaps'}-${at}.txt`, fs.readFileSync("/proc/self/smaps")); } catch (e) { process.stderr.write(String(e)); }
    if (process.env.HEAPSNAP) { import('node:v8').then((v8) => v8.writeHeapSnapshot(`${process.env.SMAPS_PREFIX ?? 'smaps'}-${at}.heapsnapshot`)); }
  }, Number(at) * 1000).unref();
}
