// Issue 14 (CPU, pass 5) scratch driver, not part of npm run bench; see bench/results-cpu.md, "pass 5".
// Usage: node capture.mjs <dist dir>: prints the raw bytes of requests the transport sends (boundaries masked).
import net from 'node:net';
import zlib from 'node:zlib';
const dist = process.argv[2];
const { HttpTransport } = await import(`${dist}/src/api/http-transport.js`);
const raw = [];
const server = net.createServer((socket) => {
  let buf = Buffer.alloc(0);
  socket.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    const text = buf.toString('latin1');
    const headEnd = text.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const len = Number(/content-length: (\d+)/i.exec(text.slice(0, headEnd))?.[1] ?? 0);
    if (buf.length < headEnd + 4 + len) return;
    raw.push(text.slice(0, headEnd + 4 + len));
    const url = text.slice(0, text.indexOf('\r\n'));
    buf = Buffer.alloc(0);
    let body = Buffer.from('{"ok":"é"}');
    let extra = '';
    if (url.includes('/gzip')) { body = zlib.gzipSync(body); extra = 'Content-Encoding: gzip\r\n'; }
    if (url.includes('/br')) { body = zlib.brotliCompressSync(body); extra = 'Content-Encoding: br\r\n'; }
    if (url.includes('/deflate')) { body = zlib.deflateSync(body); extra = 'Content-Encoding: deflate\r\n'; }
    if (url.includes('/rawdeflate')) { body = zlib.deflateRawSync(Buffer.from('{"ok":"é"}')); extra = 'Content-Encoding: deflate\r\n'; }
    if (url.includes('/redirect')) { socket.write('HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n'); return; }
    socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Dup: 1\r\nX-Dup: 2\r\n${extra}Content-Length: ${body.length}\r\n\r\n`);
    socket.write(body);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;
const t = new HttpTransport({ baseUrl: `http://127.0.0.1:${port}/v1/`, timeoutMs: 5000, userAgent: 'freight-sync/test' });
const t2 = new HttpTransport({ baseUrl: `http://127.0.0.1:${port}/v1`, timeoutMs: 5000, requestEncoding: 'multipart' });
const ep = { method: 'GET', route: '/x' };
const out = [];
const show = (r) => out.push(JSON.stringify({ status: r.status, headers: Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== 'date')), body: r.body, bytes: r.bytes.length }));
show(await t.send({ method: 'GET', path: '/loads', endpoint: ep, query: { skip: 0, limit: 50, q: 'a b' }, bearer: 'tok' }));
show(await t.send({ method: 'POST', path: '/loads', endpoint: ep, body: { caller: 'c1', n: 1, nested: { a: [1] } }, bearer: 'tok' }));
show(await t2.send({ method: 'POST', path: '/loads', endpoint: ep, body: { caller: 'c1', n: 1 } }));
show(await t.send({ method: 'PUT', path: '/loads/M1', endpoint: ep, body: { a: 'é' } }));
show(await t.send({ method: 'DELETE', path: '/loads/M1', endpoint: ep }));
const form = new FormData();
form.append('reference_number', 'M1');
form.append('file', new Blob([Buffer.from('%PDF-1.4 data')], { type: 'application/pdf' }), 'doc.pdf');
show(await t.send({ method: 'POST', path: '/loads/document', endpoint: ep, body: form, bearer: 'tok' }));
for (const p of ['/gzip', '/br', '/deflate', '/rawdeflate', '/redirect']) {
  try { show(await t.send({ method: 'GET', path: p, endpoint: ep })); } catch (e) { out.push(`ERR ${p} ${e.name} ${e.message}`); }
}
t.close(); t2.close(); server.close();
const mask = (s) => s.replace(/(boundary=|--)[-\w]*?(boundary|formdata-undici|freight-sync)[-\w]*/g, '$1<B>');
console.log(raw.map(mask).join('\n=====\n'));
console.log(out.join('\n'));
