/**
 * PDF/UA-1 (issue 53) over real HTTP with real Chromium: what a file claims, read with independent
 * tools — pdfinfo's XMP, qpdf's JSON for the catalog and the structure tree, qpdf's uncompressed
 * content streams for marked content, pdfsig for a signature — and what a template that cannot be
 * accessible gets (a 422 naming the element and the checkpoint, nothing charged).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { pdfStructureTypes, pdfText, pdfXmp } from '../../support/documents/pdf-tools.js';
import { createSigningKit, type SigningKit } from '../../support/documents/signing-kit.js';
import { inflatingPdf, numberArrayPdf } from '../../support/documents/hostile-pdfs.js';
import { PDFDocument } from '@cantoo/pdf-lib';
import { completedJobPdf, startTestApp, until, type TestApp } from '../../support/test-app.js';
import { unzip } from '../../support/documents/zip-entries.js';
import { startWebhookReceiver } from '../../support/webhook-receiver.js';
import { SAMPLE_INVOICE } from '../../support/documents/einvoice-samples.js';

const DOT =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** An invoice with what PDF/UA needs and what Chromium leaves untagged: a background, borders, a decorative image, a footer. */
const ACCESSIBLE = `<!doctype html><html lang="en"><head><title>Invoice {{ number }}</title>
<style>body { font-family: sans-serif } .box { border: 2px solid #333; background: #eef; padding: 8px }
table { border-collapse: collapse } td, th { border: 1px solid #999; padding: 2px 6px }</style></head>
<body><h1>Invoice {{ number }}</h1>
<div class="box"><p>Billed to {{ customer }} — see <a href="https://example.com/terms">our terms</a></p></div>
<img src="${DOT}" alt="Company logo" width="40" height="40"> <img src="${DOT}" alt="" width="10" height="10">
<h2>Lines</h2>
<table><thead><tr><th>Item</th><th>Qty</th></tr></thead>
<tbody>{% for line in lines %}<tr><td>{{ line.item }}</td><td>{{ line.qty }}</td></tr>{% endfor %}</tbody></table>
</body></html>`;
const DATA = {
  number: 'INV-77',
  customer: 'Ada Lovelace',
  lines: [
    { item: 'Engine', qty: 1 },
    { item: 'Cards', qty: 500 },
  ],
};
const PAGE = {
  footer_html: '<div style="font-size:8px;width:100%;text-align:center">Page <span class="pageNumber"></span></div>',
};

function withFile<T>(pdf: Buffer, read: (path: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'pdfua-'));
  try {
    writeFileSync(join(dir, 'in.pdf'), pdf);
    return read(join(dir, 'in.pdf'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** qpdf's JSON objects (keys `obj:N 0 R`). */
function qpdfObjects(
  pdf: Buffer,
): Record<string, { value?: Record<string, unknown>; stream?: { dict: Record<string, unknown> } }> {
  const json = withFile(pdf, (path) =>
    execFileSync('qpdf', ['--json=2', '--json-key=qpdf', path], { encoding: 'utf8', maxBuffer: 1 << 28 }),
  );
  return (JSON.parse(json) as { qpdf: [unknown, Record<string, never>] }).qpdf[1];
}

function catalog(pdf: Buffer): Record<string, unknown> {
  const objects = qpdfObjects(pdf);
  const trailer = objects.trailer!.value as { '/Root': string };
  return objects[`obj:${trailer['/Root']}`]!.value!;
}

/**
 * Painting operators outside marked content, counted on qpdf's uncompressed QDF output, where Chromium's
 * operators and the service's BMC/EMC each stand on their own line: independent of the service's own scanner.
 */
function unmarkedPainting(pdf: Buffer): number {
  const qdf = withFile(pdf, (path) => {
    execFileSync('qpdf', ['--qdf', '--object-streams=disable', path, `${path}.qdf`]);
    return execFileSync('cat', [`${path}.qdf`], { encoding: 'latin1', maxBuffer: 1 << 28 });
  });
  let depth = 0;
  let unmarked = 0;
  let next = false; // qpdf's QDF names each page's content stream in a comment before it
  let inContent = false;
  for (const line of qdf.split('\n')) {
    if (line.startsWith('%% Contents for page')) next = true;
    else if (next && line === 'stream') [inContent, next] = [true, false];
    else if (line === 'endstream') inContent = false;
    else if (inContent) {
      const op = /([A-Za-z]+\*?)\s*$/.exec(line)?.[1] ?? ''; // `/Table <</MCID 0 >>BDC`: the operator after `>>`
      if (op === 'BMC' || op === 'BDC') depth++;
      else if (op === 'EMC') depth--;
      else if (depth === 0 && /^(f|f\*|F|S|s|B|B\*|b|b\*|Tj|TJ|Do|sh)$/.test(op)) unmarked++;
    }
  }
  return unmarked;
}

/** Painting operators inside artifacts typed as pagination (header, footer, page numbers) and as a watermark, on qpdf's QDF output. */
function paginationPainting(pdf: Buffer): { pagination: number; watermark: number } {
  const qdf = withFile(pdf, (path) => {
    execFileSync('qpdf', ['--qdf', '--object-streams=disable', path, `${path}.qdf`]);
    return execFileSync('cat', [`${path}.qdf`], { encoding: 'latin1', maxBuffer: 1 << 28 });
  });
  const counts = { pagination: 0, watermark: 0 };
  const open: string[] = [];
  for (const line of qdf.split('\n')) {
    const op = /([A-Za-z]+\*?)\s*$/.exec(line)?.[1] ?? '';
    if (op === 'BMC' || op === 'BDC')
      open.push(
        /\/Subtype \/Watermark/.test(line) ? 'watermark' : /\/Type \/Pagination/.test(line) ? 'pagination' : '',
      );
    else if (op === 'EMC') open.pop();
    else if (/^(f|f\*|S|Tj|TJ|Do)$/.test(op) && open.length > 0) {
      const kind = open.at(-1) as keyof typeof counts | '';
      if (kind) counts[kind]++;
    }
  }
  return counts;
}

describe.each(DIALECTS)('PDF/UA on %s', (dialect) => {
  let t: TestApp;
  let user: { accountId: string; apiKey: string };
  let accessible: string;
  const balance = async () => (await t.request('GET', '/v1/account', { apiKey: user.apiKey })).body.credits as number;
  const transactions = async () =>
    ((await t.request('GET', '/v1/account/transactions', { apiKey: user.apiKey })).body.transactions as unknown[])
      .length;
  const template = async (html: string, page: Record<string, unknown> = PAGE) => {
    const res = await t.request('POST', '/v1/templates', { apiKey: user.apiKey, body: { name: 'UA', html, page } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  const create = (body: Record<string, unknown>) => t.request('POST', '/v1/pdf/create', { apiKey: user.apiKey, body });
  const download = async (url: string) => {
    const link = new URL(url);
    return (await t.request('GET', `${link.pathname}${link.search}`)).bytes;
  };
  const check = (pdf: Buffer) =>
    t.request('POST', '/v1/pdf-tools/check-accessibility', {
      apiKey: user.apiKey,
      body: { pdf_base64: pdf.toString('base64') },
    });

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_JOB_POLL_MS: '100' });
    t.services.startWorkers();
    user = await t.createAccount({ credits: 100, plan: 'enterprise' });
    accessible = await template(ACCESSIBLE);
  });
  afterAll(async () => t?.close());

  it('makes a PDF/UA-1 file: identifier and title in the XMP, every painting tagged or an artifact, figures with their text, one credit', async () => {
    const before = await balance();
    const res = await create({ template_id: accessible, data: DATA, pdf_ua: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.accessibility_checks).toMatch(/^PDF\/UA-1 machine check/);
    expect(res.body.credits_remaining).toBe(before - 1);
    const pdf = await download(res.body.url);

    const xmp = pdfXmp(pdf);
    expect(xmp).toMatch(/<pdfuaid:part>1<\/pdfuaid:part>/);
    expect(xmp).toContain('Invoice INV-77');
    const root = catalog(pdf);
    expect(root['/Lang']).toBe('u:en');
    expect(root['/MarkInfo']).toMatchObject({ '/Marked': true });
    expect(root['/ViewerPreferences']).toMatchObject({ '/DisplayDocTitle': true });
    const types = pdfStructureTypes(pdf);
    expect(types.Figure).toBe(1); // the decorative image is an artifact, not a figure
    expect(types.TH).toBe(2);
    expect(types.Link).toBe(1);
    const figures = Object.values(qpdfObjects(pdf)).filter((o) => o.value?.['/S'] === '/Figure');
    expect(figures.map((f) => f.value!['/Alt'])).toEqual(['u:Company logo']);
    expect(unmarkedPainting(pdf)).toBe(0);
    // The footer's "Page" and its number are pagination artifacts; no watermark was asked for.
    expect(paginationPainting(pdf)).toEqual({ pagination: 2, watermark: 0 });
    expect(pdfText(pdf)).toContain('Billed to Ada Lovelace');
    expect(pdfText(pdf)).toContain('Page 1');

    // The same template without pdf_ua: Chromium's tagged PDF leaves its background, borders and footer untagged.
    const plain = await create({ template_id: accessible, data: DATA });
    expect(plain.status).toBe(200);
    expect(plain.body.accessibility_checks).toBeUndefined();
    const plainPdf = await download(plain.body.url);
    expect(unmarkedPainting(plainPdf)).toBeGreaterThan(0);
    const report = await check(plainPdf);
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    expect(report.body.compliant).toBe(false);
    expect(report.body.findings.map((f: { checkpoint: string }) => f.checkpoint)).toEqual(
      expect.arrayContaining(['01-005', '06-001']),
    );
    // The check itself: the PDF/UA file passes it, and it is free.
    const txBefore = await transactions();
    const passed = await check(pdf);
    expect(passed.body).toMatchObject({ compliant: true, findings: [], more_findings: 0 });
    expect(passed.body.checkpoints.length).toBeGreaterThanOrEqual(15);
    expect(await transactions()).toBe(txBefore);
  });

  it('refuses a template without alt text, language or title, naming each and the checkpoint, and refunds the credit; without pdf_ua it prints', async () => {
    const noAlt = await template(ACCESSIBLE.replace(' alt="Company logo"', ''));
    const bare = await template(ACCESSIBLE.replace(' lang="en"', '').replace(/<title>.*<\/title>/, ''));
    const before = await balance();
    const txBefore = await transactions();
    const refused = await create({ template_id: noAlt, data: DATA, pdf_ua: true });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    const [issue] = refused.body.detail as { loc: string[]; msg: string; type: string }[];
    expect(issue!.loc).toEqual(['body', 'pdf_ua']);
    expect(issue!.msg).toContain('<img src="data:image/png;bas');
    expect(issue!.msg).toContain('13-004');
    const refusedBare = await create({ template_id: bare, data: DATA, pdf_ua: true });
    expect(refusedBare.status).toBe(422);
    const msgs = (refusedBare.body.detail as { msg: string }[]).map((d) => d.msg).join('\n');
    expect(msgs).toContain('<html> element a lang attribute');
    expect(msgs).toContain('11-001');
    expect(msgs).toContain('<title>');
    expect(msgs).toContain('06-003');
    // Found on the laid-out page, after the credit was reserved: refunded at once, as a template error is.
    expect(await balance()).toBe(before);
    expect(await transactions()).toBe(txBefore + 4);
    const recent = (await t.request('GET', '/v1/account/transactions', { apiKey: user.apiKey })).body.transactions as {
      transaction_type: string;
    }[];
    expect(recent.slice(0, 4).map((r) => r.transaction_type)).toEqual(['REFUND', 'PDFGEN', 'REFUND', 'PDFGEN']);
    expect((await create({ template_id: noAlt, data: DATA })).status).toBe(200);
  });

  it('is a template default, combines with PDF/A-2b (both identifiers, the schema described), and refuses what it cannot combine with', async () => {
    const byDefault = await template(ACCESSIBLE, { ...PAGE, pdf_ua: true });
    const res = await create({ template_id: byDefault, data: DATA, pdf_variant: 'pdf/a-2b', export_type: 'binary' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pressroom-accessibility-checks')).toMatch(/^PDF\/UA-1/);
    const xmp = pdfXmp(res.bytes);
    expect(xmp).toMatch(/<pdfaid:part>2<\/pdfaid:part>/);
    expect(xmp).toMatch(/<pdfuaid:part>1<\/pdfuaid:part>/);
    expect(xmp).toContain('<pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix>');
    expect((await check(res.bytes)).body.compliant).toBe(true);
    const off = await create({ template_id: byDefault, data: DATA, pdf_ua: false });
    expect(off.body.accessibility_checks).toBeUndefined();

    // A Factur-X invoice (PDF/A-3b with its XML attached) keeps the tags and is PDF/UA too.
    const invoice = await create({
      template_id: accessible,
      data: DATA,
      pdf_ua: true,
      einvoice: { format: 'factur-x', profile: 'en16931', invoice: SAMPLE_INVOICE },
      export_type: 'binary',
    });
    expect(invoice.status, JSON.stringify(invoice.body)).toBe(200);
    expect(invoice.headers.get('x-pressroom-accessibility-checks')).toMatch(/^PDF\/UA-1/);
    expect(invoice.headers.get('x-pressroom-einvoice-checks')).toBeTruthy();
    const invoiceXmp = pdfXmp(invoice.bytes);
    expect(invoiceXmp).toMatch(/<pdfaid:part>3<\/pdfaid:part>/);
    expect(invoiceXmp).toMatch(/<pdfuaid:part>1<\/pdfuaid:part>/);
    expect(pdfStructureTypes(invoice.bytes)).toEqual(pdfStructureTypes(res.bytes));
    expect(
      withFile(invoice.bytes, (path) => execFileSync('pdfdetach', ['-list', path], { encoding: 'utf8' })),
    ).toContain('factur-x.xml');
    expect((await check(invoice.bytes)).body.compliant).toBe(true);

    const before = await balance();
    for (const [field, body] of [
      ['tagged', { tagged: false }],
      ['pdf_variant', { pdf_variant: 'pdf/a-1b' }],
    ] as const) {
      const r = await create({ template_id: accessible, data: DATA, pdf_ua: true, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body.detail[0].loc).toEqual(['body', field]);
    }
    expect(await balance()).toBe(before);
  });

  it.runIf(dialect === 'sqlite')(
    'keeps the tags through a watermark and a signature: the file passes the check and pdfsig',
    async () => {
      const kit: SigningKit = createSigningKit();
      try {
        const up = await t.request('POST', '/v1/certificates', {
          apiKey: user.apiKey,
          body: {
            name: 'ua-seal',
            pkcs12_base64: kit.pkcs12({ cn: 'UA Seal', password: 'pw' }).toString('base64'),
            password: 'pw',
          },
        });
        expect(up.status, JSON.stringify(up.body)).toBe(201);
        const res = await create({
          template_id: accessible,
          data: DATA,
          pdf_ua: true,
          watermark: { text: 'COPY' },
          sign: { certificate: 'ua-seal' },
          export_type: 'binary',
        });
        expect(res.status).toBe(200);
        const report = await check(res.bytes);
        expect(report.body.findings).toEqual([]);
        expect(unmarkedPainting(res.bytes)).toBe(0);
        expect(paginationPainting(res.bytes)).toEqual({ pagination: 2, watermark: 1 });
        const sig = withFile(res.bytes, (path) => execFileSync('pdfsig', ['-nocert', path], { encoding: 'utf8' }));
        expect(sig).toContain('Signature Validation: Signature is Valid.');
      } finally {
        kit.close();
      }
    },
  );

  it.runIf(dialect === 'sqlite')(
    'applies to a job (its answer and webhook name the check) and to every item of a batch',
    async () => {
      const receiver = await startWebhookReceiver();
      try {
        const job = await t.request('POST', '/v1/pdf/create-async', {
          apiKey: user.apiKey,
          body: { template_id: accessible, data: DATA, pdf_ua: true, webhook_url: receiver.url },
        });
        expect(job.status, JSON.stringify(job.body)).toBe(200);
        const jobPdf = await completedJobPdf(t, user.apiKey, job.body.job_id, 120_000);
        expect(pdfXmp(jobPdf)).toMatch(/<pdfuaid:part>1<\/pdfuaid:part>/);
        const answer = await t.request('GET', `/v1/pdf/jobs/${job.body.job_id}`, { apiKey: user.apiKey });
        expect(answer.body.accessibility_checks).toMatch(/^PDF\/UA-1 machine check/);
        const [hook] = await receiver.waitFor(1, (w) => w.json?.job_id === job.body.job_id, 60_000);
        expect(hook!.json.event).toBe('pdf.completed');
        expect(hook!.json.accessibility_checks).toBe(answer.body.accessibility_checks);

        // A job without pdf_ua names no accessibility check.
        const plain = await t.request('POST', '/v1/pdf/create-async', {
          apiKey: user.apiKey,
          body: { template_id: accessible, data: DATA, webhook_url: receiver.url },
        });
        await completedJobPdf(t, user.apiKey, plain.body.job_id, 120_000);
        const plainAnswer = await t.request('GET', `/v1/pdf/jobs/${plain.body.job_id}`, { apiKey: user.apiKey });
        expect(plainAnswer.body).not.toHaveProperty('accessibility_checks');
        const [plainHook] = await receiver.waitFor(1, (w) => w.json?.job_id === plain.body.job_id, 60_000);
        expect(plainHook!.json).not.toHaveProperty('accessibility_checks');

        // A job whose document fails the check fails with the finding, refunded, and names no check.
        const noAlt = await template(ACCESSIBLE.replace(' alt="Company logo"', ''));
        const before = await balance();
        const refused = await t.request('POST', '/v1/pdf/create-async', {
          apiKey: user.apiKey,
          body: { template_id: noAlt, data: DATA, pdf_ua: true, webhook_url: receiver.url },
        });
        expect(refused.status, JSON.stringify(refused.body)).toBe(200);
        const [failed] = await receiver.waitFor(1, (w) => w.json?.job_id === refused.body.job_id, 120_000);
        expect(failed!.json.event).toBe('pdf.failed');
        expect(failed!.json.error.message).toContain('no alternative text');
        expect(failed!.json).not.toHaveProperty('accessibility_checks');
        expect(await balance()).toBe(before);
      } finally {
        await receiver.close();
      }

      const items = ['Ada', 'Grace'].map((customer) => ({ data: { ...DATA, customer } }));
      const started = await t.request('POST', '/v1/pdf/batches', {
        apiKey: user.apiKey,
        body: { template_id: accessible, items, output: 'zip', pdf_ua: true },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      let last: Record<string, any> = {};
      await until(
        async () => {
          last = (await t.request('GET', `/v1/pdf/batches/${started.body.batch_id}`, { apiKey: user.apiKey })).body;
          return ['completed', 'completed_with_errors', 'failed', 'cancelled'].includes(last.status);
        },
        120_000,
        'the batch to end',
      );
      expect(last.status).toBe('completed');
      const zip = await download(last.result.url);
      const entries = unzip(zip);
      expect(entries.size).toBe(2);
      for (const pdf of entries.values()) {
        expect(pdfXmp(pdf)).toMatch(/<pdfuaid:part>1<\/pdfuaid:part>/);
        expect(unmarkedPainting(pdf)).toBe(0);
      }
    },
  );

  it('check-accessibility refuses what is not a PDF, free', async () => {
    const res = await t.request('POST', '/v1/pdf-tools/check-accessibility', {
      apiKey: user.apiKey,
      body: { pdf_base64: Buffer.from('not a pdf at all').toString('base64') },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'pdf_base64']);
  });
});

describe('check-accessibility against hostile PDFs', () => {
  let t: TestApp;
  let user: { apiKey: string };
  let other: { apiKey: string };
  const check = (pdf: Buffer, apiKey = user.apiKey) =>
    t.request('POST', '/v1/pdf-tools/check-accessibility', { apiKey, body: { pdf_base64: pdf.toString('base64') } });

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    user = await t.createAccount({ credits: 10, plan: 'enterprise' });
    other = await t.createAccount({ credits: 10, plan: 'enterprise' });
  });
  afterAll(async () => t?.close());

  it('answers a compression bomb and a 10-million-number object without a 500, and serves another account beside them', async () => {
    const small = await PDFDocument.create();
    small.addPage([200, 200]).drawText('hello');
    const plainPdf = Buffer.from(await small.save());
    const hostile = [inflatingPdf(400 << 20), numberArrayPdf(10_000_000, { in: 'catalog' })];
    const answers = await Promise.all([...hostile.map((pdf) => check(pdf)), check(plainPdf, other.apiKey)]);
    // qpdf unpacks each under its ceilings before pdf-lib reads it: a report, or a coded refusal — never a 500.
    for (const res of answers.slice(0, 2)) {
      expect([200, 422, 503], JSON.stringify(res.body).slice(0, 300)).toContain(res.status);
      if (res.status === 200) expect(res.body.compliant).toBe(false);
      else expect(JSON.stringify(res.body)).toMatch(/PDF_TOO_COMPLEX|pdf_unreadable|SERVICE_UNAVAILABLE/);
    }
    // An untagged PDF from a PDF library: answered, not compliant, with the untagged content named.
    const plain = answers[2]!;
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect(plain.body.compliant).toBe(false);
    expect(plain.body.findings.map((f: { checkpoint: string }) => f.checkpoint)).toContain('01-005');
    expect((await t.request('GET', '/healthz')).status).toBe(200);
  });
});
