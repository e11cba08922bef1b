/**
 * What a PDF says about itself (pdfinfo's Title, Creator, Producer; the XMP of PDF/A), through the API
 * with real Chromium, on SQLite and PostgreSQL: the document's own `<title>`, else the template's name;
 * `Pressroom <version>` as Creator and Producer; never the render page's fake host or the browser's
 * user agent and version, in the metadata or anywhere in the bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../../src/version.js';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { pdfExpandedBytes, pdfInfo, pdfText, pdfXmp } from '../../support/documents/pdf-tools.js';
import { completedJobPdf, startTestApp, type TestApp } from '../../support/test-app.js';

const PRESSROOM = `Pressroom ${VERSION}`;
const UNTITLED = '<h1>Invoice {{ n }}</h1><p>Total due 45.50</p>';
const TITLED =
  '<html><head><title>Invoice {{ n }} – Zoë & Co</title></head><body><h1>Invoice {{ n }}</h1></body></html>';
const SCRIPTED = '<h1 id="h">static</h1><script>document.getElementById("h").textContent = "scripted {{ n }}"</script>';

/** The browser's names for itself and for the render page, which a PDF must not carry. */
function expectNoBrowserTraces(pdf: Buffer): void {
  // Expanded: compaction packs objects (the old Info among them, if one were left) into compressed streams.
  const bytes = pdfExpandedBytes(pdf);
  for (const trace of ['HeadlessChrome', 'Skia/PDF', 'render.pressroom.invalid'])
    expect(bytes, trace).not.toContain(trace);
}

describe.each(DOCUMENT_DIALECTS)('PDF metadata on %s', (dialect) => {
  let t: TestApp;
  let account: { accountId: string; apiKey: string };
  const templates: Record<'untitled' | 'titled' | 'scripted', string> = { untitled: '', titled: '', scripted: '' };

  const createBinary = async (templateId: string, extra: Record<string, unknown> = {}): Promise<Buffer> => {
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      body: { template_id: templateId, data: { n: 42 }, export_type: 'binary', ...extra },
    });
    expect(res.status, res.bytes.toString('utf8', 0, 300)).toBe(200);
    return res.bytes;
  };

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_JOB_POLL_MS: '100' });
    t.services.startWorkers();
    account = await t.createAccount({ credits: 20, plan: 'enterprise' });
    const names = { untitled: 'Monthly invoice', titled: 'Titled template', scripted: 'Chart report' };
    const html = { untitled: UNTITLED, titled: TITLED, scripted: SCRIPTED };
    for (const kind of ['untitled', 'titled', 'scripted'] as const) {
      const res = await t.request('POST', '/v1/templates', {
        apiKey: account.apiKey,
        body: { name: names[kind], html: html[kind] },
      });
      expect(res.status).toBe(201);
      templates[kind] = res.body.id;
    }
  });
  afterAll(async () => t?.close());

  it.each([
    { kind: 'untitled', title: 'Monthly invoice', text: 'Invoice 42' },
    { kind: 'titled', title: 'Invoice 42 – Zoë & Co', text: 'Invoice 42' },
    { kind: 'scripted', title: 'Chart report', text: 'scripted 42' },
  ] as const)('a $kind document is titled "$title", made by Pressroom', async ({ kind, title, text }) => {
    const pdf = await createBinary(templates[kind]);
    expect(pdfInfo(pdf)).toMatchObject({ Title: title, Creator: PRESSROOM, Producer: PRESSROOM, Pages: '1' });
    expect(pdfText(pdf)).toContain(text);
    expectNoBrowserTraces(pdf);
  });

  // 2b completes Chromium's file with pdf-lib; 1b goes through Ghostscript, which drops UTF-16 titles.
  it.each([
    { kind: 'untitled', variant: 'pdf/a-2b', title: 'Monthly invoice' },
    { kind: 'titled', variant: 'pdf/a-2b', title: 'Invoice 42 – Zoë &#38; Co' },
    { kind: 'untitled', variant: 'pdf/a-1b', title: 'Monthly invoice' },
    { kind: 'titled', variant: 'pdf/a-1b', title: 'Invoice 42 – Zoë &#38; Co' },
  ] as const)('$variant of a $kind document says the same in Info and XMP', async ({ kind, variant, title }) => {
    const pdf = await createBinary(templates[kind], { pdf_variant: variant });
    const info = pdfInfo(pdf);
    expect(info).toMatchObject({ Creator: PRESSROOM, Producer: PRESSROOM });
    const xmp = pdfXmp(pdf);
    expect(xmp).toMatch(new RegExp(`pdfaid:part(="|>)${variant.charAt(6)}`));
    expect(xmp).toContain(`<rdf:li xml:lang="x-default">${title}</rdf:li>`);
    expect(xmp).toContain(`<xmp:CreatorTool>${PRESSROOM}</xmp:CreatorTool>`);
    expect(xmp).toContain(`<pdf:Producer>${PRESSROOM}</pdf:Producer>`);
    expect(info.Title).toBe(title.replace('&#38;', '&'));
    expectNoBrowserTraces(pdf);
  });

  it('gives a job the same metadata (the worker produces it the same way)', async () => {
    const res = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: account.apiKey,
      body: { template_id: templates.untitled, data: { n: 7 } },
    });
    expect(res.status).toBe(200);
    const pdf = await completedJobPdf(t, account.apiKey, res.body.job_id, 90_000);
    expect(pdfInfo(pdf)).toMatchObject({ Title: 'Monthly invoice', Creator: PRESSROOM, Producer: PRESSROOM });
    expectNoBrowserTraces(pdf);
  }, 120_000);

  it('titles a studio preview "Preview"', async () => {
    const res = await t.request('POST', '/v1/templates/preview', {
      apiKey: account.apiKey,
      body: { html: UNTITLED, data: { n: 1 } },
    });
    expect(res.status).toBe(200);
    expect(pdfInfo(res.bytes)).toMatchObject({ Title: 'Preview', Creator: PRESSROOM, Producer: PRESSROOM });
    expectNoBrowserTraces(res.bytes);
  });
});
