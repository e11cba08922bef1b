// A server between `pressroom generate` and the service (issue 49, case 11): the API passed through, every
// item's link (and the zip's) answered as LIE says: huge (3 GiB starting %PDF-, chunked), html, trickle (1 byte / 20 s).
// UPSTREAM=http://localhost:8080 PORT=8081 LIE=huge node lying-links.mjs
import { createServer } from 'node:http';
const upstreamUrl = process.env.UPSTREAM ?? 'http://localhost:8080';
const port = Number(process.env.PORT ?? 8081);
const kind = process.env.LIE ?? 'huge';
createServer(async (req, res) => {
  try {
    if (req.url.startsWith('/link/')) {
      if (kind === 'html')
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Access denied</html>');
      res.writeHead(200, { 'content-type': 'application/pdf' }).write('%PDF-');
      if (kind === 'trickle') {
        const t = setInterval(() => res.write('x'), 20_000);
        res.once('close', () => clearInterval(t));
        return;
      }
      const block = Buffer.alloc(1 << 20, 0x20);
      for (let i = 0; i < 3072 && !res.destroyed; i++)
        if (!res.write(block))
          await new Promise((r) => {
            res.once('drain', r);
            res.once('close', r);
          });
      return void res.end();
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = {};
    for (const h of ['x-api-key', 'content-type', 'accept']) if (req.headers[h]) headers[h] = req.headers[h];
    const up = await fetch(upstreamUrl + req.url, {
      method: req.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    let body = Buffer.from(await up.arrayBuffer());
    if (up.ok && (up.headers.get('content-type') ?? '').includes('json')) {
      const j = JSON.parse(body);
      const via = (u) => `http://127.0.0.1:${port}/link/${encodeURIComponent(u)}`;
      for (const it of j.items ?? []) if (it.url) it.url = via(it.url);
      if (j.result?.url) j.result.url = via(j.result.url);
      body = Buffer.from(JSON.stringify(j));
    }
    res
      .writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/octet-stream' })
      .end(body);
  } catch {
    res.destroy();
  }
}).listen(port, '127.0.0.1');
