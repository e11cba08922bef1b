// Case 7: preview_template over /mcp of an 800 px wide page of noise, 20,000 / 1,600 / 100,000 px tall (README.md).
import { readFileSync } from 'node:fs';
const url = process.env.URL ?? 'http://localhost:8080';
const work = process.env.WORK ?? '/tmp/pressroom-free-work';
const key = process.env.KEY_A;
const headers = { 'x-api-key': key, 'content-type': 'application/json' };
for (const page of ['tall', 'box', 'huge']) {
  const body = readFileSync(`${work}/noise-${page}.json`);
  const created = await fetch(`${url}/v1/templates`, { method: 'POST', headers, body });
  const template = await created.json();
  if (created.status !== 201) {
    console.log(`${page}: POST /v1/templates ${created.status}: ${JSON.stringify(template).slice(0, 300)}`);
    continue;
  }
  const call = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'preview_template', arguments: { template_id: template.id } },
  });
  const started = performance.now();
  const health = (async () => {
    await new Promise((r) => setTimeout(r, 1000));
    const t0 = performance.now();
    const h = await fetch(`${url}/healthz`);
    return `${h.status} in ${Math.round(performance.now() - t0)} ms`;
  })();
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...headers, accept: 'application/json, text/event-stream' },
    body: call,
  });
  const text = await res.text();
  console.log(
    `${page}: template ${body.length} B; tools/call ${call.length} B -> HTTP ${res.status}, ${text.length} B in ${Math.round(performance.now() - started)} ms; /healthz meanwhile ${await health}`,
  );
  const answer = JSON.parse(text);
  for (const c of answer.result?.content ?? []) {
    if (c.type === 'image') {
      const b = Buffer.from(c.data, 'base64');
      console.log(`  ${c.mimeType}, ${b.length} B`);
    } else console.log(`  text: ${c.text.slice(0, 300)}`);
  }
  if (answer.result?.isError) console.log('  isError: true');
}
