/**
 * What knowing who uses an asset costs (issue 50): an account with `--templates` templates, each naming
 * `--names` assets and every third one published, then `GET /v1/assets` (every name with its users),
 * an upload under a used name, `GET /v1/assets/{name}` as JSON, and the save and publish of a 2 MB
 * template (its asset names are read from the parse tree), each with the worst `/healthz` answer
 * time while it ran (the event loop's stall, seen from outside).
 *
 *   node --import tsx bench/costs/asset-uses.ts [--templates 300] [--names 50]
 */
import { startTestApp } from '../../test/support/test-app.js';
import { option } from '../cli-option.js';

const TEMPLATES = Number(option('--templates', '300'));
const NAMES = Number(option('--names', '50'));
const svg = (word: string) =>
  Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg"><text>${word}</text></svg>`).toString('base64');

const t = await startTestApp('sqlite', {});
try {
  const { accountId, apiKey } = await t.createAccount({
    credits: 10,
    plan: 'enterprise',
    rate_limit: { per_minute: 100_000 },
  });
  for (let i = 0; i < NAMES; i++)
    await t.request('POST', '/v1/assets', { apiKey, body: { name: `n${i}.svg`, content_base64: svg(String(i)) } });
  const html = Array.from({ length: NAMES }, (_, i) => `<img src="{{ asset('n${i}.svg') }}">`).join('');
  for (let i = 0; i < TEMPLATES; i++) {
    const created = await t.services.templates.create(accountId, { name: `T${i}`, html });
    if (i % 3 === 0) await t.services.templates.versions.create(accountId, created.id, { tag: 'v1' });
  }
  /** `work`'s time and the slowest /healthz answer while it ran. */
  const timed = async (work: () => Promise<unknown>) => {
    let worst = 0;
    let done = false;
    const probe = (async () => {
      while (!done) {
        const startedAt = performance.now();
        await t.request('GET', '/healthz');
        worst = Math.max(worst, performance.now() - startedAt);
      }
    })();
    const startedAt = performance.now();
    await work();
    const ms = performance.now() - startedAt;
    done = true;
    await probe;
    return `${Math.round(ms)} ms (healthz worst ${Math.round(worst)} ms)`;
  };
  const unit = `<div><img src="{{ asset('n1.svg') }}"> {{ customer.name }} {% if x %}<b>{{ y | upper }}</b>{% endif %}</div>\n`;
  const big = unit.repeat(Math.floor(2_000_000 / unit.length));
  for (let round = 1; round <= 3; round++) {
    let id = '';
    console.log(
      JSON.stringify({
        round,
        templates: TEMPLATES,
        names: NAMES,
        list: await timed(() => t.request('GET', '/v1/assets', { apiKey })),
        upload: await timed(() =>
          t.request('POST', '/v1/assets', { apiKey, body: { name: 'n0.svg', content_base64: svg(`round ${round}`) } }),
        ),
        describe: await timed(() =>
          t.request('GET', '/v1/assets/n0.svg', { apiKey, headers: { accept: 'application/json' } }),
        ),
        save2MB: await timed(
          async () =>
            (id = (await t.request('POST', '/v1/templates', { apiKey, body: { name: 'Big', html: big } })).body.id),
        ),
        publish2MB: await timed(() =>
          t.request('POST', `/v1/templates/${id}/versions`, { apiKey, body: { tag: 'big' } }),
        ),
      }),
    );
  }
} finally {
  await t.close();
}
