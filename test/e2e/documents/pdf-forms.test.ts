/**
 * Fillable PDF forms as templates (issue 54) over real HTTP, on both databases: forms made here with
 * pdf-lib (never committed files), their fields as no-code tools read them, documents filled, read back
 * with independent tools — pdftotext for the drawn values, pdf-lib for the fields left, pdfsig for a
 * signature — and what a bad value or a bad PDF gets (a 422 naming it, nothing charged, nothing stored).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument, PDFName, PDFString, type PDFForm } from '@cantoo/pdf-lib';
import { DIALECTS } from '../../support/databases.js';
import { pdfInfo, pdfText } from '../../support/documents/pdf-tools.js';
import { unzip } from '../../support/documents/zip-entries.js';
import { createSigningKit } from '../../support/documents/signing-kit.js';
import { completedJobPdf, startTestApp, until, type TestApp } from '../../support/test-app.js';

/** An application form: every kind of field a form template fills, one with a tooltip and one formatted as a number. */
async function applicationForm(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([600, 800]);
  const form = doc.getForm();
  const at = (y: number, width = 300, height = 24) => ({ x: 50, y, width, height });
  const name = form.createTextField('customer.name');
  name.enableRequired();
  name.addToPage(page, at(720));
  name.acroField.dict.set(PDFName.of('TU'), PDFString.of('Customer name'));
  form.createTextField('customer.city').addToPage(page, at(680));
  const amount = form.createTextField('amount');
  amount.addToPage(page, at(640));
  amount.acroField.dict.set(
    PDFName.of('AA'),
    doc.context.obj({ F: { S: 'JavaScript', JS: PDFString.of('AFNumber_Format(2, 0, 0, 0, "", true);') } }),
  );
  const notes = form.createTextField('notes');
  notes.enableMultiline();
  // A fixed size: with "auto" (0) @libpdf/core draws a multi-line value one line the field's height (docs/pdf-forms.md).
  notes.addToPage(page, at(500, 300, 110));
  notes.setFontSize(10);
  form.createCheckBox('agree').addToPage(page, at(460, 20, 20));
  const country = form.createDropdown('country');
  country.addOptions(['France', 'Japan', 'Poland']);
  country.addToPage(page, at(420, 200));
  const plan = form.createRadioGroup('plan');
  plan.addOptionToPage('basic', page, at(380, 15, 15));
  plan.addOptionToPage('pro', page, { ...at(380, 15, 15), x: 100 });
  return Buffer.from(await doc.save());
}

/** A PDF with pages and no form. */
async function plainPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([300, 300]).drawText('No form here', { x: 20, y: 150 });
  return Buffer.from(await doc.save());
}

const DATA = {
  'customer.name': 'Zoë Łódź',
  customer: { city: '東京' },
  amount: 1234.5,
  notes: 'First line\nSecond line',
  agree: true,
  country: 'Japan',
  plan: 'pro',
};

const fieldsOf = async (pdf: Buffer): Promise<PDFForm> => (await PDFDocument.load(pdf)).getForm();

function withFile<T>(pdf: Buffer, use: (path: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'pdf-forms-'));
  try {
    writeFileSync(join(dir, 'in.pdf'), pdf);
    return use(join(dir, 'in.pdf'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.each(DIALECTS)('fillable PDF forms as templates (%s)', (dialect) => {
  let t: TestApp;
  let apiKey: string;
  let formId: string;
  const create = (body: Record<string, unknown>) => t.request('POST', '/v1/pdf/create', { apiKey, body });
  const fill = (extra: Record<string, unknown> = {}, data: Record<string, unknown> = DATA) =>
    create({ template_id: formId, data, export_type: 'binary', ...extra });
  const balance = async () => (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const ledger = async () => (await t.request('GET', '/v1/account/transactions', { apiKey })).body.total as number;
  const templateCount = async () => (await t.request('GET', '/v1/templates', { apiKey })).body.templates.length;
  const download = async (url: string) => {
    const link = new URL(url);
    return (await t.request('GET', `${link.pathname}${link.search}`)).bytes;
  };

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_JOB_POLL_MS: '100' });
    t.services.startWorkers();
    apiKey = (await t.createAccount({ credits: 100, plan: 'enterprise' })).apiKey;
    const created = await t.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Application', kind: 'pdf_form', pdf_base64: (await applicationForm()).toString('base64') },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ kind: 'pdf_form', html: '', css: null, form: { pages: 1, fields: 7 } });
    expect(created.body.id).toHaveLength(12);
    formId = created.body.id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('lists each form field for no-code tools: its key, label, type, options and required flag', async () => {
    const fields = await t.request('GET', `/v1/templates/${formId}/fields`, { apiKey });
    expect(fields.status).toBe(200);
    const byKey = Object.fromEntries(fields.body.map((f: { key: string }) => [f.key, f]));
    expect(Object.keys(byKey)).toEqual([
      'customer.name',
      'customer.city',
      'amount',
      'notes',
      'agree',
      'country',
      'plan',
    ]);
    expect(byKey['customer.name']).toMatchObject({ label: 'Customer name', type: 'string', required: true });
    expect(byKey['customer.city']).toMatchObject({ label: 'customer.city', type: 'string', required: false });
    expect(byKey.amount).toMatchObject({ type: 'number' });
    expect(byKey.agree).toMatchObject({ type: 'boolean', required: false });
    expect(byKey.country).toMatchObject({ type: 'string', options: ['France', 'Japan', 'Poland'] });
    expect(byKey.country.helpText).toBe('One of "France", "Japan", "Poland"');
    expect(byKey.plan).toMatchObject({ type: 'string', options: ['basic', 'pro'] });
  });

  it('fills and flattens by default: the values, accented ones too, are page text and no field is left', async () => {
    const before = await balance();
    const res = await fill();
    expect(res.status, res.bytes.toString()).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const text = pdfText(res.bytes).replace(/\s+/g, ' ');
    for (const value of ['Zoë Łódź', '1234.5', 'First line Second line', 'Japan']) expect(text).toContain(value);
    expect((await fieldsOf(res.bytes)).getFields()).toHaveLength(0);
    expect(await balance()).toBe(before - 1);
  });

  it('keeps the form fillable with flatten: false, and locks its fields with read_only: true', async () => {
    const open = await fill({ form: { flatten: false } });
    expect(open.status, open.bytes.toString()).toBe(200);
    const form = await fieldsOf(open.bytes);
    expect(form.getTextField('customer.name').getText()).toBe('Zoë Łódź');
    expect(form.getTextField('customer.city').getText()).toBe('東京');
    expect(form.getTextField('notes').getText()).toBe('First line\nSecond line');
    expect(form.getCheckBox('agree').isChecked()).toBe(true);
    expect(form.getDropdown('country').getSelected()).toEqual(['Japan']);
    expect(form.getRadioGroup('plan').getSelected()).toBe('pro');
    expect(form.getFields().some((f) => f.isReadOnly())).toBe(false);

    const locked = await fill({ form: { read_only: true } });
    expect(locked.status).toBe(200);
    const lockedForm = await fieldsOf(locked.bytes);
    expect(lockedForm.getFields()).toHaveLength(7);
    expect(lockedForm.getFields().every((f) => f.isReadOnly())).toBe(true);
    expect(lockedForm.getTextField('customer.name').getText()).toBe('Zoë Łódź');
  });

  it('refuses bad values before the charge, naming the field, and warns of keys the form lacks', async () => {
    const [credits, entries] = [await balance(), await ledger()];
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ ...DATA, country: 'Spain' }, 'country', /"Spain" is not among the field's options/],
      [{ ...DATA, plan: 'gold' }, 'plan', /not among the field's options/],
      [{ ...DATA, agree: 'yes' }, 'agree', /true or false/],
      [{ ...DATA, 'customer.name': '' }, 'customer.name', /requires "customer.name"/],
      [{ ...DATA, amount: 'a lot' }, 'amount', /as a number/],
      [{ ...DATA, 'customer.name': 'Łódź 東京' }, 'customer.name', /one font/],
    ];
    for (const [data, field, msg] of cases) {
      const res = await fill({}, data);
      expect(res.status, `${field}: ${res.bytes.toString()}`).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'data', field]);
      expect(res.body.detail[0].msg).toMatch(msg);
    }
    const { 'customer.name': _name, ...withoutName } = DATA;
    expect((await fill({}, withoutName)).body.detail[0].loc).toEqual(['body', 'data', 'customer.name']);
    expect(await balance()).toBe(credits);
    expect(await ledger()).toBe(entries);

    const extra = await create({ template_id: formId, data: { ...DATA, nickname: 'Zo' } });
    expect(extra.status, JSON.stringify(extra.body)).toBe(200);
    expect(extra.body.warnings).toEqual([
      { code: 'FORM_FIELD_UNKNOWN', message: expect.stringContaining('"nickname"') },
    ]);
  });

  it('refuses what a form document cannot be, and `form` on an HTML template', async () => {
    const credits = await balance();
    for (const [extra, loc] of [
      [{ pdf_ua: true }, ['body', 'pdf_ua']],
      [{ form: { flatten: true, read_only: true } }, ['body', 'form', 'read_only']],
    ] as const) {
      const res = await fill(extra);
      expect(res.status, res.bytes.toString()).toBe(422);
      expect(res.body.detail[0].loc).toEqual(loc);
    }
    const html = await t.request('POST', '/v1/templates', { apiKey, body: { name: 'Note', html: '<p>{{ x }}</p>' } });
    const res = await create({ template_id: html.body.id, data: { x: 1 }, form: { flatten: false } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'form']);
    expect(await balance()).toBe(credits);
  });

  it('refuses a PDF without a form, bytes that are not a PDF, and html on a form template, storing nothing', async () => {
    const count = await templateCount();
    const refusals: [Record<string, unknown>, string[], RegExp][] = [
      [{ pdf_base64: (await plainPdf()).toString('base64') }, ['body', 'pdf_base64'], /no fillable form/],
      [{ pdf_base64: Buffer.from('GIF89a not a pdf').toString('base64') }, ['body', 'pdf_base64'], /not a PDF/],
      [{}, ['body', 'pdf_base64'], /needs its fillable PDF/],
      [{ pdf_base64: (await applicationForm()).toString('base64'), html: '<p>x</p>' }, ['body', 'html'], /has no html/],
    ];
    for (const [extra, loc, msg] of refusals) {
      const res = await t.request('POST', '/v1/templates', {
        apiKey,
        body: { name: 'Bad', kind: 'pdf_form', ...extra },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail[0].loc).toEqual(loc);
      expect(res.body.detail[0].msg).toMatch(msg);
    }
    expect(await templateCount()).toBe(count);
    const html = await t.request('PUT', `/v1/templates/${formId}`, { apiKey, body: { html: '<p>x</p>' } });
    expect(html.status).toBe(422);
    expect(html.body.detail[0].loc).toEqual(['body', 'html']);
  });

  it('keeps edited labels, and a published version its PDF when a new one is uploaded', async () => {
    const copy = await t.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Versioned', kind: 'pdf_form', pdf_base64: (await applicationForm()).toString('base64') },
    });
    const id = copy.body.id;
    const edited = await t.request('PUT', `/v1/templates/${id}`, {
      apiKey,
      body: {
        fields: [{ key: 'country', label: 'Country of residence', helpText: 'Where you live', type: 'integer' }],
      },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    const fields = (await t.request('GET', `/v1/templates/${id}/fields`, { apiKey })).body;
    expect(fields.find((f: { key: string }) => f.key === 'country')).toMatchObject({
      label: 'Country of residence',
      helpText: 'Where you live',
      type: 'string',
      options: ['France', 'Japan', 'Poland'],
    });
    const unknown = await t.request('PUT', `/v1/templates/${id}`, {
      apiKey,
      body: { fields: [{ key: 'x', label: 'X' }] },
    });
    expect(unknown.body.detail[0].loc).toEqual(['body', 'fields', 0, 'key']);

    expect((await t.request('POST', `/v1/templates/${id}/versions`, { apiKey, body: { tag: 'v1' } })).status).toBe(200);
    const other = await PDFDocument.create();
    other
      .getForm()
      .createTextField('reference')
      .addToPage(other.addPage([300, 300]), { x: 20, y: 200, width: 200, height: 24 });
    const replaced = await t.request('PUT', `/v1/templates/${id}`, {
      apiKey,
      body: { pdf_base64: Buffer.from(await other.save()).toString('base64') },
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body.form.fields).toBe(1);
    const draft = await create({ template_id: id, data: { reference: 'R-1' }, export_type: 'binary' });
    expect(pdfText(draft.bytes)).toContain('R-1');
    const v1 = await create({ template_id: id, data: DATA, version: 'v1', export_type: 'binary' });
    expect(v1.status, v1.bytes.toString()).toBe(200);
    expect(pdfText(v1.bytes)).toContain('Zoë Łódź');
  });

  it('fills through create-async and a batch', async () => {
    const job = await t.request('POST', '/v1/pdf/create-async', { apiKey, body: { template_id: formId, data: DATA } });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    expect(pdfText(await completedJobPdf(t, apiKey, job.body.job_id, 60_000))).toContain('Zoë Łódź');

    const names = ['Ada', 'Grace', 'Hedy', 'Katherine', 'Mary'];
    const started = await t.request('POST', '/v1/pdf/batches', {
      apiKey,
      body: {
        template_id: formId,
        items: names.map((name) => ({ data: { ...DATA, 'customer.name': name } })),
        output: 'merged',
      },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    let last: Record<string, any> = {};
    await until(
      async () => {
        last = (await t.request('GET', `/v1/pdf/batches/${started.body.batch_id}`, { apiKey })).body;
        return ['completed', 'completed_with_errors', 'failed', 'cancelled'].includes(last.status);
      },
      60_000,
      'the batch to end',
    );
    expect(last.status, JSON.stringify(last)).toBe('completed');
    const merged = pdfText(await download(last.result.url));
    for (const name of names) expect(merged).toContain(name);
  });

  it('creates a form template from a multipart upload of the PDF, and refuses a bad one storing nothing', async () => {
    const pdf = await applicationForm();
    const upload = (parts: [string, string | Blob, string?][]) => {
      const form = new FormData();
      for (const [name, value, filename] of parts)
        if (typeof value === 'string') form.append(name, value);
        else form.append(name, value, filename);
      return fetch(`${t.baseUrl}/v1/templates`, { method: 'POST', headers: { 'x-api-key': apiKey }, body: form });
    };
    const file = (bytes: Buffer) => new Blob([new Uint8Array(bytes)], { type: 'application/pdf' });
    const made = await upload([
      ['name', 'Uploaded'],
      ['kind', 'pdf_form'],
      ['pdf', file(pdf), 'application.pdf'],
    ]);
    const body = (await made.json()) as Record<string, any>;
    expect(made.status, JSON.stringify(body)).toBe(201);
    expect(body).toMatchObject({ name: 'Uploaded', kind: 'pdf_form', html: '', form: { pages: 1, fields: 7 } });
    const fields = (await t.request('GET', `/v1/templates/${body.id}/fields`, { apiKey })).body;
    expect(fields.map((f: { key: string }) => f.key)).toEqual(
      (await t.request('GET', `/v1/templates/${formId}/fields`, { apiKey })).body.map((f: { key: string }) => f.key),
    );
    const filled = await create({ template_id: body.id, data: DATA, export_type: 'binary' });
    expect(filled.status).toBe(200);
    expect(pdfText(filled.bytes)).toContain('Zoë Łódź');

    const count = await templateCount();
    const base: [string, string | Blob, string?][] = [
      ['name', 'Bad'],
      ['kind', 'pdf_form'],
    ];
    const refusals: [[string, string | Blob, string?][], (string | number)[], RegExp][] = [
      [base, ['body', 'pdf'], /file part named "pdf"/],
      [[...base, ['pdf', file(Buffer.from('GIF89a not a pdf')), 'x.pdf']], ['body', 'pdf'], /not a PDF/],
      [[...base, ['pdf', file(await plainPdf()), 'plain.pdf']], ['body', 'pdf'], /no fillable form/],
      [
        [...base, ['pdf', file(Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(3_000_000)])), 'big.pdf']],
        ['body', 'pdf'],
        /at most 3000000 bytes/,
      ],
      [[...base, ['pdf', file(pdf), 'a.pdf'], ['pdf', file(pdf), 'b.pdf']], ['body', 'pdf'], /once/],
      [[...base, ['pdf', pdf.toString('latin1')]], ['body', 'pdf'], /file part/],
      [
        [
          ['name', 'Bad'],
          ['kind', 'pdf'],
          ['pdf', file(pdf), 'a.pdf'],
        ],
        ['body', 'kind'],
        /makes a pdf_form template/,
      ],
      [[...base, ['html', '<p>x</p>'], ['pdf', file(pdf), 'a.pdf']], ['body', 'html'], /takes name, kind/],
      [
        [
          ['kind', 'pdf_form'],
          ['pdf', file(pdf), 'a.pdf'],
        ],
        ['body', 'name'],
        /./,
      ],
    ];
    for (const [parts, loc, msg] of refusals) {
      const res = await upload(parts);
      const answer = (await res.json()) as { detail: { loc: unknown; msg: string }[] };
      expect(res.status, `${loc.join('.')}: ${JSON.stringify(answer)}`).toBe(422);
      expect(answer.detail[0]?.loc).toEqual(loc);
      expect(answer.detail[0]?.msg).toMatch(msg);
    }
    expect(await templateCount()).toBe(count);
  });

  it.runIf(dialect === 'sqlite')(
    'fills a 300-item batch of a form template: 300 PDFs in the zip, each with its own values, 300 credits',
    async () => {
      const ITEMS = 300;
      const payer = (await t.createAccount({ credits: ITEMS, plan: 'enterprise' })).apiKey;
      const copy = await t.request('POST', '/v1/templates', {
        apiKey: payer,
        body: { name: 'Batch form', kind: 'pdf_form', pdf_base64: (await applicationForm()).toString('base64') },
      });
      expect(copy.status).toBe(201);
      const started = await t.request('POST', '/v1/pdf/batches', {
        apiKey: payer,
        body: {
          template_id: copy.body.id,
          items: Array.from({ length: ITEMS }, (_, i) => ({
            // Latin text only: a CJK value embeds a CJK font whole (docs/pdf-forms.md), a few MB per PDF.
            data: {
              ...DATA,
              'customer.name': `Applicant ${i + 1}`,
              customer: { city: 'Paris' },
              notes: `Row ${i + 1}`,
            },
            filename: `row-${i + 1}`,
          })),
          output: 'zip',
        },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      expect(started.body).toMatchObject({ total: ITEMS, credits_remaining: 0 });
      let last: Record<string, any> = {};
      await until(
        async () => {
          last = (await t.request('GET', `/v1/pdf/batches/${started.body.batch_id}`, { apiKey: payer })).body;
          return ['completed', 'completed_with_errors', 'failed', 'cancelled'].includes(last.status);
        },
        240_000,
        'the batch to end',
      );
      expect(last, JSON.stringify(last)).toMatchObject({
        status: 'completed',
        total: ITEMS,
        completed: ITEMS,
        failed: 0,
      });
      const link = new URL(last.result.url);
      const entries = unzip(
        Buffer.from(await (await fetch(`${t.baseUrl}${link.pathname}${link.search}`)).arrayBuffer()),
      );
      expect(entries.size).toBe(ITEMS);
      for (const row of [1, 150, 300]) {
        const text = pdfText(entries.get(`row-${row}.pdf`)!).replace(/\s+/g, ' ');
        expect(text).toContain(`Applicant ${row} `);
        expect(text).toContain(`Row ${row} `);
      }
      const transactions = (await t.request('GET', '/v1/account/transactions?limit=1000', { apiKey: payer })).body
        .transactions as { transaction_type: string; credits: number }[];
      const total = (type: string) =>
        transactions.filter((tx) => tx.transaction_type === type).reduce((sum, tx) => sum + tx.credits, 0);
      expect(Math.abs(total('PDFGEN'))).toBe(ITEMS);
      expect(total('REFUND')).toBe(0);
      expect((await t.request('GET', '/v1/account', { apiKey: payer })).body.credits).toBe(0);
    },
    300_000,
  );

  it.runIf(dialect === 'sqlite')(
    'finishes a filled form: metadata, a watermark, and a signature pdfsig verifies',
    async () => {
      const kit = createSigningKit();
      try {
        const up = await t.request('POST', '/v1/certificates', {
          apiKey,
          body: {
            name: 'form-seal',
            pkcs12_base64: kit.pkcs12({ cn: 'Form Seal', password: 'pw' }).toString('base64'),
            password: 'pw',
          },
        });
        expect(up.status, JSON.stringify(up.body)).toBe(201);
        const res = await fill({
          metadata: { title: 'Application of Zoë', author: 'Pressroom test' },
          watermark: { text: 'COPY' },
          sign: { certificate: 'form-seal' },
        });
        expect(res.status, res.bytes.toString()).toBe(200);
        expect(pdfInfo(res.bytes)).toMatchObject({ Title: 'Application of Zoë', Author: 'Pressroom test' });
        const text = pdfText(res.bytes);
        expect(text).toContain('COPY');
        expect(text).toContain('Zoë Łódź');
        const sig = withFile(res.bytes, (path) => execFileSync('pdfsig', ['-nocert', path], { encoding: 'utf8' }));
        expect(sig).toContain('Signature Validation: Signature is Valid.');
      } finally {
        kit.close();
      }
    },
  );
});
