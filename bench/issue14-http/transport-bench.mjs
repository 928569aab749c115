// Issue 14 (CPU, pass 5) scratch driver, not part of npm run bench; see bench/results-cpu.md, "pass 5".
// CPU per GET of a 50-load page through HttpTransport, before and after builds alternated in one process.
// Usage: node transport-bench.mjs <before dist> <after dist> <rounds> <pages per round>
const [bDist, aDist, roundsS, pagesS] = process.argv.slice(2);
const rounds = Number(roundsS), pages = Number(pagesS);
const { startSimulatorProcess } = await import(`${aDist}/bench/simulator-process.js`);
const sim = await startSimulatorProcess({ loads: pages * 50, seed: 7 });
const builds = [['before', bDist], ['after', aDist]];
const transports = {};
for (const [name, dist] of builds) {
  const { HttpTransport } = await import(`${dist}/src/api/http-transport.js`);
  transports[name] = new HttpTransport({ baseUrl: sim.baseUrl, timeoutMs: 30000 });
}
const tok = await transports.after.send({ method: 'POST', path: '/retrieve-token', endpoint: { method: 'POST', route: '/retrieve-token' }, body: { clientId: sim.clientId, clientSecret: sim.clientSecret } });
const bearer = JSON.parse(tok.body).data.access_token;
const ep = { method: 'GET', route: '/loads' };
const results = { before: [], after: [] };
let bytes = 0;
for (let r = 0; r < rounds; r++) {
  for (const [name] of r % 2 ? [...builds].reverse() : builds) {
    const t = transports[name];
    const c0 = process.cpuUsage();
    for (let p = 0; p < pages; p++) {
      const res = await t.send({ method: 'GET', path: '/loads', endpoint: ep, query: { skip: p * 50, limit: 50 }, bearer });
      if (res.status !== 200) throw new Error(`status ${res.status}: ${res.body.slice(0, 200)}`);
      bytes = res.bytes.length;
    }
    const c = process.cpuUsage(c0);
    results[name].push((c.user + c.system) / 1000 / pages);
  }
}
for (const t of Object.values(transports)) t.close();
await sim.stop();
const stat = (xs) => { const s = xs.slice(2).sort((a, b) => a - b); return `min ${s[0].toFixed(3)} median ${s[Math.floor(s.length / 2)].toFixed(3)}`; };
console.log(`page ${bytes} bytes; CPU ms per GET (rounds after the first 2): before ${stat(results.before)}; after ${stat(results.after)}`);
