// cancel.mjs <account.json> [n]: an n-item batch (50,000), then its cancel, then waits for its end; phases create, cancel, after-cancel.
import { readFileSync } from 'node:fs';
export default async function (base, [keyFile, n = '50000']) {
  const key = JSON.parse(readFileSync(keyFile, 'utf8')).api_key;
  const h = { 'x-api-key': key, 'content-type': 'application/json' };
  const tpl = await (
    await fetch(`${base}/v1/templates`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ name: 'Small', html: '<p>{{ n }}</p>' }),
    })
  ).json();
  const items = Array.from({ length: Number(n) }, (_, i) => ({ data: { n: i } }));
  globalThis.phase?.('create');
  let t0 = performance.now();
  const created = await fetch(`${base}/v1/pdf/batches`, {
    method: 'POST',
    headers: h,
    body: JSON.stringify({ template_id: tpl.id, items }),
  });
  const batch = await created.json();
  const createMs = Math.round(performance.now() - t0);
  await new Promise((r) => setTimeout(r, 1000));
  globalThis.phase?.('cancel');
  t0 = performance.now();
  const cancelled = await fetch(`${base}/v1/pdf/batches/${batch.batch_id}/cancel`, {
    method: 'POST',
    headers: { 'x-api-key': key },
  });
  const c = await cancelled.json();
  const cancelMs = Math.round(performance.now() - t0);
  globalThis.phase?.('after-cancel');
  let final = c;
  for (
    let i = 0;
    i < 600 && !['cancelled', 'completed', 'failed', 'completed_with_errors'].includes(final.status);
    i++
  ) {
    await new Promise((r) => setTimeout(r, 200));
    final = await (await fetch(`${base}/v1/pdf/batches/${batch.batch_id}`, { headers: { 'x-api-key': key } })).json();
  }
  const account = await (await fetch(`${base}/v1/account`, { headers: { 'x-api-key': key } })).json();
  return {
    create: { status: created.status, ms: createMs, total: batch.total },
    cancel: {
      status: cancelled.status,
      ms: cancelMs,
      answer: c.status,
      completed: c.completed,
      cancelled: c.cancelled,
    },
    final: { status: final.status, completed: final.completed, cancelled: final.cancelled },
    credits: account.credits,
  };
}
