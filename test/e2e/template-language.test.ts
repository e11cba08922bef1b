/**
 * The template language over real HTTP, on SQLite and PostgreSQL (issue 13): template errors carry
 * `part`, `line` and `column` as fields when a template is saved and when it is rendered, an unknown
 * filter is refused at save with its own position, and the css is a template filled from the data;
 * the helpers an invoice needs print what a reader and a scanner expect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/databases.js';
import { pdfBarcodes, pdfText } from '../support/pdf-tools.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

describe.each(DIALECTS)('the template language over the API on %s', (dialect) => {
  let t: TestApp;
  let account: { accountId: string; apiKey: string };
  const balance = async () => (await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits as number;
  const templateCount = async () => Number((await t.services.database.db.selectFrom('templates').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_RENDER_CONCURRENCY: '1' });
    account = await t.createAccount({ credits: 10, plan: 'pro' });
  });
  afterAll(async () => t?.close());

  it.each([
    ['html', { html: 'Total:\n  {{ amount | money }}' }, ['body', 'html'], { part: 'html', line: 2, column: 15 }],
    ['footer', { html: 'ok', page: { footer_html: '{{ n | upper | shout }}' } }, ['body', 'page', 'footer_html'], { part: 'footer', line: 1, column: 16 }],
    ['css', { html: 'ok', css: 'p { color: red }\n{% if x is positive %}{% endif %}' }, ['body', 'css'], { part: 'css', line: 2, column: 12 }],
  ])('refuses an unknown filter or test in the %s at save, at its own position, and stores nothing', async (_part, body, loc, ctx) => {
    const before = await templateCount();
    const res = await t.request('POST', '/v1/templates', { apiKey: account.apiKey, body: { name: 'Unknown filter', ...body } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ loc, type: 'template_syntax', msg: expect.stringMatching(/unknown (filter|test) "(money|shout|positive)"/), ctx }]);
    expect(await templateCount()).toBe(before);
  });

  it('names the part, line and column of a syntax error found at render (preview of unsaved text)', async () => {
    const res = await t.request('POST', '/v1/templates/preview', { apiKey: account.apiKey, body: { html: 'ok', page: { header_html: 'a\n{{ x | }}' } } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'TEMPLATE_SYNTAX_ERROR', part: 'header', line: 2 });
  });

  it('names the part, line and column of a render error in the header, and charges nothing', async () => {
    const created = await t.request('POST', '/v1/templates', { apiKey: account.apiKey, body: { name: 'Broken header', html: '<p>{{ title }}</p>', page: { header_html: '<span>\n  {{ nope() }}</span>' } } });
    expect(created.status).toBe(201);
    const before = await balance();
    const res = await t.request('POST', '/v1/pdf/create', { apiKey: account.apiKey, body: { template_id: created.body.id, data: { title: 'x' } } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'TEMPLATE_RENDER_ERROR', part: 'header', line: 2, column: expect.any(Number) });
    expect(await balance()).toBe(before);
  });

  it('fills the css from the data, and infers the fields it uses', async () => {
    const created = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: { name: 'Brand css', html: '<p class="x">{{ title }}</p>', css: '.x::after { content: "{{ brand.tagline }}"; }' },
    });
    expect(created.status).toBe(201);
    const fields = await t.request('GET', `/v1/templates/${created.body.id}/fields`, { apiKey: account.apiKey });
    expect((fields.body as { key: string }[]).map((f) => f.key)).toEqual(['title', 'brand.tagline']);
    const preview = await t.request('POST', '/v1/templates/preview', {
      apiKey: account.apiKey,
      body: { template_id: created.body.id, data: { title: 'Hello', brand: { tagline: 'Fish & Chips' } } },
    });
    expect(preview.status).toBe(200);
    expect(pdfText(preview.bytes)).toContain('HelloFish & Chips');
  });

  it('prints locale amounts and dates, Markdown terms and a SEPA QR code a scanner reads; a text amount is a warning, not a NaN', async () => {
    const html = `{% set locale = "de-DE" %}<h1>Rechnung {{ number }}</h1>
      <p>Datum: {{ date | format_date("long") }}</p>
      <p>Summe: {{ total | format_currency("EUR") }} (MwSt. {{ vat | format_percent }})</p>
      <p>Alt: {{ legacy_total | format_currency("EUR") }}</p>
      <div>{{ terms | markdown }}</div>
      {{ sepa_qrcode(iban=iban, name="Pressroom GmbH", amount=total, reference=number, width="40mm") }}
      {{ number | barcode("code128", includetext=true, width="60mm") }}`;
    const created = await t.request('POST', '/v1/templates', { apiKey: account.apiKey, body: { name: 'Invoice helpers', html } });
    expect(created.status).toBe(201);
    const data = { number: 'RE-2026-0042', date: '2026-11-24', total: 1234.56, vat: 0.19, legacy_total: '1.234,56', iban: 'DE89370400440532013000', terms: 'Zahlbar **innerhalb von 14 Tagen**.' };
    const before = await balance();
    const res = await t.request('POST', '/v1/pdf/create', { apiKey: account.apiKey, body: { template_id: created.body.id, data, export_type: 'binary' } });
    expect(res.status).toBe(200);
    expect(await balance()).toBe(before - 1);
    const text = pdfText(res.bytes).replace(/\u00a0/g, ' ');
    expect(text).toContain('Datum: 24. November 2026');
    expect(text).toContain('Summe: 1.234,56 € (MwSt. 19 %)');
    expect(text).toContain('Alt: 1.234,56');
    expect(text).not.toContain('NaN');
    expect(text).toContain('Zahlbar innerhalb von 14 Tagen.');
    expect(res.headers.get('x-pressroom-warnings')).toBe('1');
    const codes = pdfBarcodes(res.bytes);
    expect(codes).toContain('CODE-128:RE-2026-0042');
    expect(codes).toContain('QR-Code:BCD\n002\n1\nSCT\n\nPressroom GmbH\nDE89370400440532013000\nEUR1234.56\n\nRE-2026-0042');
  });
});
