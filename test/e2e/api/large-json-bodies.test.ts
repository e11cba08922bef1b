/**
 * JSON bodies over JSON_PARSE_THRESHOLD_BYTES (json-body-bounds.ts) are parsed on a parse thread (src/http/json-body),
 * and the client cannot tell, except that other requests are not held up: a large body renders with
 * the values from deep inside it, a large template is stored whole, and a malformed, too deep or
 * prototype-keyed large body gets exactly the answer a small one gets, charging and writing nothing.
 * The /metrics counter shows the large bodies did go to a thread. On SQLite and PostgreSQL; one small
 * render per database. (The latency effect is measured by bench/bounds/json-body-latency.ts, not asserted.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

const KiB = 1024;

/** Invoice-like rows: many small objects, as a large `data` usually is. */
function rows(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    sku: `SKU-${i}`,
    qty: i % 7,
    price: `${(i * 13) % 1000}.50`,
    tags: ['a', 'ü', 'x,y'],
  }));
}

/** The message JSON.parse gives this process for `text` (the server runs the same Node). */
function parseError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected malformed JSON');
}

/** `count` of an offloaded-parse outcome in the /metrics text (0 when absent). */
function offloaded(metrics: string, outcome: string): number {
  const line = metrics
    .split('\n')
    .find((l) => l.startsWith(`pressroom_json_offloaded_parse_seconds_count{outcome="${outcome}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe.each(DOCUMENT_DIALECTS)('large JSON bodies on %s', (dialect) => {
  let t: TestApp;
  let apiKey: string;
  let templateId: string;

  const metrics = async () => (await t.request('GET', '/metrics')).body as string;
  const account = async () => {
    const balance = (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
    const transactions = (await t.request('GET', '/v1/account/transactions', { apiKey })).body
      .transactions as unknown[];
    return { balance, transactions };
  };
  const post = (path: string, rawBody: string) => t.request('POST', path, { apiKey, rawBody });

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_RENDER_CONCURRENCY: '1' });
    apiKey = (await t.createAccount({ credits: 5, plan: 'enterprise' })).apiKey;
    const created = await t.request('POST', '/v1/templates', {
      apiKey,
      body: {
        name: 'Big data',
        html: '<p>{{ rows | length }} rows; last {{ rows[19999].sku }}; deep {{ tail.a.b.c }}</p>',
      },
    });
    expect(created.status).toBe(201);
    templateId = created.body.id;
  });
  afterAll(async () => t?.close());

  it('has the documented default threshold', () => {
    expect(t.config.http.jsonWorkers.thresholdBytes).toBe(256 * KiB);
  });

  it('renders a large body with the values from deep inside it, on a parse thread, for one credit', async () => {
    const before = await account();
    const parsedBefore = offloaded(await metrics(), 'parsed');
    const body = JSON.stringify({
      template_id: templateId,
      export_type: 'binary',
      data: { rows: rows(20_000), tail: { a: { b: { c: 'FROM-DEEP-INSIDE' } } } },
    });
    expect(body.length).toBeGreaterThan(4 * t.config.http.jsonWorkers.thresholdBytes);

    const res = await post('/v1/pdf/create', body);
    expect(res.status, res.bytes.subarray(0, 300).toString()).toBe(200);
    const text = pdfText(res.bytes).replace(/\s+/g, ' ');
    expect(text).toContain('20000 rows; last SKU-19999; deep FROM-DEEP-INSIDE');
    expect(offloaded(await metrics(), 'parsed')).toBe(parsedBefore + 1);
    expect((await account()).balance).toBe(before.balance - 1);
  });

  it('stores a large template whole', async () => {
    const html = `<p>${'Lorem ipsum dolor sit amet. '.repeat(12_000)}</p><p>{{ end }}</p>`;
    const sample = { rows: rows(2_000), end: 'THE END' };
    const created = await post('/v1/templates', JSON.stringify({ name: 'Long', html, sample_data: sample }));
    expect(created.status, JSON.stringify(created.body).slice(0, 300)).toBe(201);
    const stored = await t.request('GET', `/v1/templates/${created.body.id}`, { apiKey });
    expect(stored.body.html).toBe(html);
    expect(stored.body.sample_data).toEqual(sample);
  });

  describe('bad large bodies get the answer of bad small ones, and cost nothing', () => {
    const pad = 'x'.repeat(300 * KiB);

    it('malformed JSON: 422 json_invalid with JSON.parse’s message', async () => {
      const before = await account();
      const invalidBefore = offloaded(await metrics(), 'invalid');
      for (const body of [
        `{"template_id":"${templateId}","data":{"a": oops}}`,
        `{"template_id":"${templateId}","data":{"pad":"${pad}","a": oops}}`,
      ]) {
        const res = await post('/v1/pdf/create', body);
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          detail: [{ loc: ['body'], msg: `JSON decode error: ${parseError(body)}`, type: 'json_invalid' }],
        });
      }
      expect(offloaded(await metrics(), 'invalid')).toBe(invalidBefore + 1);
      expect(await account()).toEqual(before);
    });

    it('too deep, NUL and __proto__: the same 422 detail as the small body', async () => {
      const before = await account();
      const deep = `${'{"d":'.repeat(70)}1${'}'.repeat(70)}`;
      const bad = `"__proto__":{"x":1},"n\\u0000":2,"deep":${deep}`;
      const small = await post('/v1/pdf/create', `{"template_id":"${templateId}","data":{${bad}}}`);
      const large = await post('/v1/pdf/create', `{"template_id":"${templateId}","data":{${bad},"pad":"${pad}"}}`);
      expect(small.status).toBe(422);
      expect(small.body.detail.map((d: { type: string }) => d.type)).toEqual([
        'forbidden_key',
        'string_nul_character',
        'json_too_deep',
      ]);
      expect(small.body.detail[2].loc.slice(0, 4)).toEqual(['body', 'data', 'deep', 'd']);
      expect(large.status).toBe(422);
      expect(large.body).toEqual(small.body);
      expect(await account()).toEqual(before);
    });

    it('a large body of whitespace is no body: 422 body missing, as a small one', async () => {
      const small = await post('/v1/pdf/create', '  ');
      const large = await post('/v1/pdf/create', ' '.repeat(300 * KiB));
      expect(small.status).toBe(422);
      expect(large.status).toBe(422);
      expect(large.body).toEqual(small.body);
    });
  });

  it('shows the parse threads in /metrics', async () => {
    expect(await metrics()).toMatch(/^pressroom_json_parse_threads\{state="waiting"\} 0$/m);
  });
});
