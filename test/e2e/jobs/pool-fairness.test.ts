/**
 * Issue 37 case 4, over real HTTP: qpdf and the xmllint threads are shared by account, not by arrival.
 * Account A floods a pool with hostile work that is free for it (each run takes seconds, none is
 * charged); account B's one small request is answered while every one of A's requests is still
 * pending, and the process keeps answering. Real qpdf, real xmllint, real Chromium for B's invoice.
 * Order is asserted from state (which of A's requests have settled when B is answered), never from
 * the clock; B's latency is printed, not asserted.
 */
import { createDeflate } from 'node:zlib';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEInvoice } from '../../../src/einvoice/einvoice.js';
import { SAMPLE_INVOICE } from '../../support/documents/einvoice-samples.js';
import { pdfInfo, pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

/**
 * A one-page PDF whose content stream inflates to `mib` MiB of hex text (Flate over ASCIIHex), a few
 * hundred KiB on the wire: qpdf decodes and recompresses it when it writes, seconds of CPU per run.
 */
async function inflatingPdf(mib: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => parts.push(chunk));
  const ended = new Promise((resolve) => deflate.on('end', resolve));
  const zeros = Buffer.alloc(1024 * 1024, '0');
  for (let i = 0; i < mib; i++)
    if (!deflate.write(zeros)) await new Promise((resolve) => deflate.once('drain', resolve));
  deflate.end();
  await ended;
  const stream = Buffer.concat(parts);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Contents 4 0 R >>',
  ];
  const chunks: Buffer[] = [Buffer.from('%PDF-1.7\n')];
  const offsets: number[] = [];
  let length = chunks[0]!.length;
  const add = (chunk: Buffer) => {
    chunks.push(chunk);
    length += chunk.length;
  };
  objects.forEach((body, i) => {
    offsets.push(length);
    add(Buffer.from(`${i + 1} 0 obj\n${body}\nendobj\n`));
  });
  offsets.push(length);
  add(Buffer.from(`4 0 obj\n<< /Length ${stream.length} /Filter [/FlateDecode /ASCIIHexDecode] >>\nstream\n`));
  add(stream);
  add(Buffer.from('\nendstream\nendobj\n'));
  const xref = length;
  add(
    Buffer.from(
      `xref\n0 5\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(chunks);
}

/** A one-page PDF that reads `text`. */
async function onePage(text: string): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([300, 400]);
  page.drawText(text, { x: 30, y: 300, size: 18, font: await doc.embedFont(StandardFonts.Helvetica) });
  return Buffer.from(await doc.save());
}

/** A pool's gauges and counter from /metrics. */
async function poolMetrics(t: TestApp, pool: string): Promise<{ active: number; waiting: number; started: number }> {
  const body = (await t.request('GET', '/metrics')).body as string;
  const read = (name: string) => Number(new RegExp(`^${name}\\{pool="${pool}"\\} (\\d+)$`, 'm').exec(body)?.[1] ?? NaN);
  return {
    active: read('pressroom_pool_active'),
    waiting: read('pressroom_pool_waiting'),
    started: read('pressroom_pool_started_total'),
  };
}

/** Each promise, with the indexes of those settled so far. */
function tracked<T>(promises: Promise<T>[]): { all: Promise<T[]>; settled: Set<number> } {
  const settled = new Set<number>();
  return { all: Promise.all(promises.map((p, i) => p.finally(() => settled.add(i)))), settled };
}

/** What a refused request must look like: a coded error, nothing charged (checked by the caller's balance). */
function expectCodedRefusal(
  res: { status: number; body: { error?: unknown; detail?: unknown } },
  statuses: number[],
): void {
  expect(statuses, JSON.stringify(res.body).slice(0, 300)).toContain(res.status);
  expect(res.body.error ?? res.body.detail, JSON.stringify(res.body).slice(0, 300)).toBeTruthy();
}

describe('qpdf runs are shared by account, not by arrival (sqlite, real qpdf)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(
      'sqlite',
      {
        // A's merges run as long as qpdf needs: certainly still running when B is answered.
        PRESSROOM_PDF_TOOLS_TIMEOUT_MS: '300000',
      },
      { tuning: { pdfTools: { concurrency: 2 } } },
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it("another account's one-page rotate is answered while all of one account's hostile merges are pending", async () => {
    const a = await t.createAccount({ credits: 10, plan: 'enterprise' });
    const b = await t.createAccount({ credits: 10, plan: 'enterprise' });
    const [bomb, page] = await Promise.all([inflatingPdf(160), onePage('B page 1')]);
    const tool = (account: { apiKey: string }, name: string, body: unknown) =>
      t.request('POST', `/v1/pdf-tools/${name}`, {
        apiKey: account.apiKey,
        body: { ...(body as object), export_type: 'binary' },
      });

    // Three merges: more than A's share of the two qpdf slots, so some of A's work waits.
    const flood = tracked(
      [0, 1, 2].map(() =>
        tool(a, 'merge', { pdfs: [{ pdf_base64: bomb.toString('base64') }, { pdf_base64: page.toString('base64') }] }),
      ),
    );
    // A's work runs in qpdf and more of it waits (a merge, or the page-count check of one: on a loaded machine the
    // checks of the second and third merges can still be queued behind the first merge when B arrives).
    await until(
      async () => {
        const qpdf = await poolMetrics(t, 'qpdf');
        return qpdf.active >= 1 && qpdf.waiting >= 1;
      },
      120_000,
      "A's merges to fill its share of qpdf and wait for more",
    );
    expect(flood.settled.size).toBe(0);

    const startedAt = performance.now();
    const rotated = await tool(b, 'rotate', { pdf_base64: page.toString('base64'), rotation: 90 });
    const bMs = Math.round(performance.now() - startedAt);
    expect(rotated.status, rotated.bytes.toString().slice(0, 300)).toBe(200);
    expect(pdfInfo(rotated.bytes, ['-f', '1', '-l', '1'])['Page    1 rot']).toBe('90');
    console.log(
      `qpdf: B's rotate answered in ${bMs} ms; A's merges settled by then: ${flood.settled.size} of 3 (qpdf ${JSON.stringify(await poolMetrics(t, 'qpdf'))})`,
    );
    // Answered while every one of A's merges is still pending, and the process answers.
    expect([...flood.settled]).toEqual([]);
    expect((await t.request('GET', '/healthz')).status).toBe(200);

    // A's merges end as qpdf finishes them (or are refused); each delivered one is charged once, nothing else.
    const answers = await flood.all;
    const delivered = answers.filter((res) => res.status === 200).length;
    for (const res of answers) if (res.status !== 200) expectCodedRefusal(res, [503, 504]);
    console.log(`qpdf: A's merges answered ${answers.map((res) => res.status).join(', ')}`);
    expect((await t.request('GET', '/v1/account', { apiKey: a.apiKey })).body.credits).toBe(10 - delivered);
    expect((await t.request('GET', '/v1/account', { apiKey: b.apiKey })).body.credits).toBe(9);
  }, 600_000);
});

describe('XML checks are shared by account, not by arrival (sqlite, real xmllint and Chromium)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp('sqlite', {});
    await t.services.renderer.warmUp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("another account's valid MINIMUM invoice is answered while all of one account's hostile CII documents are pending", async () => {
    const a = await t.createAccount({ credits: 10, plan: 'enterprise' });
    const b = await t.createAccount({ credits: 10, plan: 'enterprise' });
    const template = async (owner: { apiKey: string }) =>
      (
        await t.request('POST', '/v1/templates', {
          apiKey: owner.apiKey,
          body: { name: 'invoice', html: '<h1>Invoice {{ einvoice.invoice.number }}</h1>' },
        })
      ).body.id as string;
    const [aTemplate, bTemplate] = await Promise.all([template(a), template(b)]);
    // CII with 100,000 attributes its schema does not allow: each one a finding, seconds of libxml2 per check.
    const own = (
      await buildEInvoice(
        { format: 'factur-x', profile: 'minimum', invoice: SAMPLE_INVOICE },
        { accountId: a.accountId },
      )
    ).xml;
    const attributes = Array.from({ length: 100_000 }, (_, i) => ` a${i}="${i}"`).join('');
    const hostile = own.replace('<rsm:CrossIndustryInvoice ', `<rsm:CrossIndustryInvoice${attributes} `);
    expect(hostile.length).toBeGreaterThan(1_400_000);
    const create = (owner: { apiKey: string }, body: Record<string, unknown>) =>
      t.request('POST', '/v1/pdf/create', { apiKey: owner.apiKey, body: { data: {}, ...body, export_type: 'binary' } });

    const before = (await poolMetrics(t, 'xmllint')).started || 0;
    // Three documents, each read (one check) then validated (a long check): more than A's share of the two threads.
    const flood = tracked(
      [0, 1, 2].map(() => create(a, { template_id: aTemplate, einvoice: { format: 'factur-x', xml: hostile } })),
    );
    // Every document read and the first validation given a thread: A's other validations wait.
    await until(
      async () => (await poolMetrics(t, 'xmllint')).started >= before + 4,
      120_000,
      "A's documents to reach their schema checks",
    );
    expect((await poolMetrics(t, 'xmllint')).waiting).toBeGreaterThan(0);

    const startedAt = performance.now();
    const invoice = await create(b, {
      template_id: bTemplate,
      einvoice: { format: 'factur-x', profile: 'minimum', invoice: SAMPLE_INVOICE },
    });
    const bMs = Math.round(performance.now() - startedAt);
    expect(invoice.status, invoice.bytes.toString().slice(0, 300)).toBe(200);
    expect(pdfText(invoice.bytes)).toContain(`Invoice ${SAMPLE_INVOICE.number}`);
    console.log(
      `xmllint: B's MINIMUM invoice answered in ${bMs} ms; A's documents settled by then: ${flood.settled.size} of 3 (xmllint ${JSON.stringify(await poolMetrics(t, 'xmllint'))})`,
    );
    // Answered while every one of A's documents is still pending, and the process answers.
    expect([...flood.settled]).toEqual([]);
    expect((await t.request('GET', '/healthz')).status).toBe(200);

    // A's documents are refused (their schema findings, or no thread in time): nothing charged.
    const answers = await flood.all;
    console.log(`xmllint: A's documents answered ${answers.map((res) => res.status).join(', ')}`);
    for (const res of answers) expectCodedRefusal(res, [422, 503]);
    expect((await t.request('GET', '/v1/account', { apiKey: a.apiKey })).body.credits).toBe(10);
    expect((await t.request('GET', '/v1/account', { apiKey: b.apiKey })).body.credits).toBe(9);
  }, 600_000);
});
