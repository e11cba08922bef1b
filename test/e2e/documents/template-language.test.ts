/**
 * The template language over real HTTP, on SQLite and PostgreSQL (issue 13): template errors carry
 * `part`, `line` and `column` as fields when a template is saved and when it is rendered, an unknown
 * filter is refused at save with its own position, and the css is a template filled from the data;
 * the helpers an invoice needs print what a reader and a scanner expect; strict mode and its warnings:
 * a strict template refuses data that lacks a required field or a printed variable (422, nothing
 * charged, queued or stored), a lenient one prints it blank and says so in `warnings`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { pdfBarcodes, pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

describe.each(DOCUMENT_DIALECTS)('the template language over the API on %s', (dialect) => {
  let t: TestApp;
  let account: { accountId: string; apiKey: string };
  const balance = async () =>
    (await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits as number;
  const count = async (table: 'templates' | 'jobs' | 'files') =>
    Number(
      (
        await t.services.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const templateCount = () => count('templates');

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_RENDER_CONCURRENCY: '1' });
    account = await t.createAccount({ credits: 10, plan: 'pro' });
  });
  afterAll(async () => t?.close());

  it.each([
    ['html', { html: 'Total:\n  {{ amount | money }}' }, ['body', 'html'], { part: 'html', line: 2, column: 15 }],
    [
      'footer',
      { html: 'ok', page: { footer_html: '{{ n | upper | shout }}' } },
      ['body', 'page', 'footer_html'],
      { part: 'footer', line: 1, column: 16 },
    ],
    [
      'css',
      { html: 'ok', css: 'p { color: red }\n{% if x is positive %}{% endif %}' },
      ['body', 'css'],
      { part: 'css', line: 2, column: 12 },
    ],
  ])(
    'refuses an unknown filter or test in the %s at save, at its own position, and stores nothing',
    async (_part, body, loc, ctx) => {
      const before = await templateCount();
      const res = await t.request('POST', '/v1/templates', {
        apiKey: account.apiKey,
        body: { name: 'Unknown filter', ...body },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([
        {
          loc,
          type: 'template_syntax',
          msg: expect.stringMatching(/unknown (filter|test) "(money|shout|positive)"/),
          ctx,
        },
      ]);
      expect(await templateCount()).toBe(before);
    },
  );

  it('names the part, line and column of a syntax error found at render (preview of unsaved text)', async () => {
    const res = await t.request('POST', '/v1/templates/preview', {
      apiKey: account.apiKey,
      body: { html: 'ok', page: { header_html: 'a\n{{ x | }}' } },
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'TEMPLATE_SYNTAX_ERROR', part: 'header', line: 2 });
  });

  it('names the part, line and column of a render error in the header, and charges nothing', async () => {
    const created = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: {
        name: 'Broken header',
        html: '<p>{{ title }}</p>',
        page: { header_html: '<span>\n  {{ nope() }}</span>' },
      },
    });
    expect(created.status).toBe(201);
    const before = await balance();
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      body: { template_id: created.body.id, data: { title: 'x' } },
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      error: 'TEMPLATE_RENDER_ERROR',
      part: 'header',
      line: 2,
      column: expect.any(Number),
    });
    expect(await balance()).toBe(before);
  });

  it('fills the css from the data, and infers the fields it uses', async () => {
    const created = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: {
        name: 'Brand css',
        html: '<p class="x">{{ title }}</p>',
        css: '.x::after { content: "{{ brand.tagline }}"; }',
      },
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
    const created = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: { name: 'Invoice helpers', html },
    });
    expect(created.status).toBe(201);
    const data = {
      number: 'RE-2026-0042',
      date: '2026-11-24',
      total: 1234.56,
      vat: 0.19,
      legacy_total: '1.234,56',
      iban: 'DE89370400440532013000',
      terms: 'Zahlbar **innerhalb von 14 Tagen**.',
    };
    const before = await balance();
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      body: { template_id: created.body.id, data, export_type: 'binary' },
    });
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
    expect(codes).toContain(
      'QR-Code:BCD\n002\n1\nSCT\n\nPressroom GmbH\nDE89370400440532013000\nEUR1234.56\n\nRE-2026-0042',
    );
  });

  describe('strict mode and warnings', () => {
    const STRICT_HTML = '<p>Dear {{ customer.name }}</p>{% if vat %}<p>VAT ID: {{ customer.vat_id }}</p>{% endif %}';
    let strictId: string;

    beforeAll(async () => {
      const created = await t.request('POST', '/v1/templates', {
        apiKey: account.apiKey,
        body: { name: 'Strict letter', html: STRICT_HTML, strict: true },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      strictId = created.body.id;
    });

    it('is a template setting: returned, kept by an update that leaves it out, snapshotted by a version', async () => {
      expect((await t.request('GET', `/v1/templates/${strictId}`, { apiKey: account.apiKey })).body.strict).toBe(true);
      const renamed = await t.request('PUT', `/v1/templates/${strictId}`, {
        apiKey: account.apiKey,
        body: { name: 'Strict letter (2026)' },
      });
      expect(renamed.body).toMatchObject({ name: 'Strict letter (2026)', strict: true });
      const version = await t.request('POST', `/v1/templates/${strictId}/versions`, {
        apiKey: account.apiKey,
        body: { tag: 'strict-v1' },
      });
      expect(version.status).toBe(200);
      expect(
        (
          await t.request('GET', `/v1/templates/${strictId}/versions/${version.body.version_number}`, {
            apiKey: account.apiKey,
          })
        ).body.strict,
      ).toBe(true);
      const lenient = await t.request('POST', '/v1/templates', {
        apiKey: account.apiKey,
        body: { name: 'Lenient', html: 'x' },
      });
      expect(lenient.body.strict).toBe(false);
    });

    it('a strict template refuses data without a required field with 422 naming it, at every door, before any charge, job or file', async () => {
      const before = { credits: await balance(), jobs: await count('jobs'), files: await count('files') };
      const missing = {
        detail: [{ loc: ['body', 'data', 'customer.name'], msg: 'Field required by the template', type: 'missing' }],
      };
      const doors: [string, Record<string, unknown>][] = [
        ['/v1/pdf/create', { template_id: strictId, data: { customer: { name: '' } } }],
        ['/v1/pdf/create', { template_id: strictId, data: { 'customer.name': null }, export_type: 'binary' }],
        ['/v1/pdf/create', { template_id: strictId, version: 'strict-v1', data: {} }],
        ['/v1/pdf/create-async', { template_id: strictId, data: { customer: {} } }],
        ['/v1/templates/preview', { template_id: strictId, data: { customer: { name: '' } } }],
      ];
      for (const [path, body] of doors) {
        const res = await t.request('POST', path, { apiKey: account.apiKey, body });
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(422);
        expect(res.body).toEqual(missing);
      }
      const image = await t.request('POST', '/v1/templates', {
        apiKey: account.apiKey,
        body: { name: 'Strict card', kind: 'image', html: '<h1>{{ title }}</h1>', strict: true },
      });
      const refused = await t.request('POST', '/v1/image/create', {
        apiKey: account.apiKey,
        body: { template_id: image.body.id, data: { title: '' } },
      });
      expect(refused.status).toBe(422);
      expect(refused.body.detail).toEqual([
        { loc: ['body', 'data', 'title'], msg: 'Field required by the template', type: 'missing' },
      ]);
      expect({ credits: await balance(), jobs: await count('jobs'), files: await count('files') }).toEqual(before);
    });

    it('a strict template refuses a printed variable the data lacks with 422 TEMPLATE_RENDER_ERROR naming it and its place, charging nothing', async () => {
      const before = { credits: await balance(), files: await count('files') };
      // customer.vat_id is printed only inside an `if`, so it is not a required field: the render finds it missing.
      const res = await t.request('POST', '/v1/pdf/create', {
        apiKey: account.apiKey,
        body: { template_id: strictId, data: { customer: { name: 'Ada' }, vat: true } },
      });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({
        error: 'TEMPLATE_RENDER_ERROR',
        part: 'html',
        line: 1,
        column: STRICT_HTML.indexOf('customer.vat_id') + 1,
      });
      expect(res.body.message).toContain('"customer.vat_id" is not in the data');
      expect({ credits: await balance(), files: await count('files') }).toEqual(before);
    });

    it('a lenient template prints the document, and the answer names each missing field and undefined variable', async () => {
      const html =
        '<p>Dear {{ customer.name }}</p><p>Note: {{ note }}</p><p>Total: {{ total | format_number("en-US") }}</p>';
      const created = await t.request('POST', '/v1/templates', {
        apiKey: account.apiKey,
        body: { name: 'Lenient letter', html },
      });
      expect(
        created.body.fields.filter((f: { required: boolean }) => f.required).map((f: { key: string }) => f.key),
      ).toEqual(['customer.name', 'note', 'total']);
      const before = await balance();
      // note is null: a deliberate empty, missing as a required field but not an undefined variable.
      const res = await t.request('POST', '/v1/pdf/create', {
        apiKey: account.apiKey,
        body: { template_id: created.body.id, data: { note: null, total: 'twelve' } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await balance()).toBe(before - 1);
      expect(res.body.warnings).toEqual([
        { code: 'MISSING_REQUIRED_FIELD', message: expect.stringContaining('"customer.name" is a required field') },
        { code: 'MISSING_REQUIRED_FIELD', message: expect.stringContaining('"note" is a required field') },
        {
          code: 'UNDEFINED_VARIABLE',
          message: `"customer.name" is not in the data (line 1, column ${html.indexOf('customer.name') + 1}); printed as nothing (in the HTML)`,
        },
        { code: 'INVALID_NUMBER', message: expect.stringContaining('format_number: "twelve" is not a number') },
      ]);
      const pdf = await fetch(res.body.url);
      expect(pdfText(Buffer.from(await pdf.arrayBuffer()))).toMatch(/Dear\s+Note:\s+Total: twelve/);
    });
  });
});
