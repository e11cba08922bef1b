// upload.mjs <account.json> <rows.csv> [parallel]: a template of the account, then the CSV as a multipart rows file, `parallel` at once.
import { readFileSync, openAsBlob } from 'node:fs';
export default async function (base, [keyFile, csv, parallel = '1']) {
  const key = JSON.parse(readFileSync(keyFile, 'utf8')).api_key;
  const tpl = await (
    await fetch(`${base}/v1/templates`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Wide', html: '<p>{{ c1 }}</p>' }),
    })
  ).json();
  const one = async () => {
    const form = new FormData();
    form.set('template_id', tpl.id);
    form.set('rows', await openAsBlob(csv, { type: 'text/csv' }), 'wide.csv');
    const t0 = performance.now();
    const res = await fetch(`${base}/v1/pdf/batches`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    const text = await res.text();
    return { status: res.status, ms: Math.round(performance.now() - t0), body: text.slice(0, 300) };
  };
  return Promise.all(Array.from({ length: Number(parallel) }, one));
}
