/**
 * Batches (issue 40) over real HTTP with real Chromium, on SQLite and PostgreSQL: a 3-row CSV gives
 * three PDFs with each row's text, as links, in a zip and merged (one outline entry per item); a bad
 * row is a 422 naming it and nothing is charged or stored; 402 when the account cannot cover the
 * batch; cancel refunds exactly the items that had not started; the signed pdf.batch.completed webhook;
 * a rows file uploaded as multipart; another account's batch is not found.
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';
import { unzip } from '../../support/documents/zip-entries.js';

const LETTER = `<html><body><h1>Certificate for {{ name }}</h1><p>Hours: {{ hours }}</p>
{% if honours %}<p>With honours</p>{% endif %}</body></html>`;
const FIELDS = [
  { key: 'name', label: 'Name', type: 'string', required: true },
  { key: 'hours', label: 'Hours', type: 'number', required: true },
  { key: 'honours', label: 'Honours', type: 'boolean', required: false },
];
const CSV =
  'name,hours,honours,_filename\nAda Lovelace,12.5,true,ada\n"Hopper, Grace",8,no,grace\nAlan Turing,3,,alan\n';
const SECRET = 'a-batch-webhook-secret-0123456789';

/** The merged PDF's outline titles, as qpdf reads them. */
function outlineTitles(pdf: Buffer): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'batch-pdf-'));
  try {
    writeFileSync(join(dir, 'm.pdf'), pdf);
    const json = JSON.parse(
      execFileSync('qpdf', ['--json=2', '--json-key=outlines', join(dir, 'm.pdf')]).toString(),
    ) as { outlines: { title: string; destpageposfrom1: number }[] };
    return json.outlines.map((o) => `${o.title}@${o.destpageposfrom1}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.each(DIALECTS)('batches on %s', (dialect) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let alice: { accountId: string; apiKey: string };
  let bob: { accountId: string; apiKey: string };
  let templateId: string;

  const start = (body: Record<string, unknown>, apiKey = alice.apiKey) =>
    t.request('POST', '/v1/pdf/batches', { apiKey, body });
  const batch = (id: string, apiKey = alice.apiKey) => t.request('GET', `/v1/pdf/batches/${id}`, { apiKey });
  const finished = async (id: string) => {
    let last: Record<string, any> = {};
    await until(
      async () => {
        last = (await batch(id)).body;
        return ['completed', 'completed_with_errors', 'failed', 'cancelled'].includes(last.status);
      },
      120_000,
      `batch ${id} to end`,
    );
    return last;
  };
  const download = async (url: string) => {
    const link = new URL(url);
    const res = await t.request('GET', `${link.pathname}${link.search}`);
    expect(res.status).toBe(200);
    return res.bytes;
  };
  const balance = async (apiKey = alice.apiKey) =>
    (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const ledger = async (apiKey = alice.apiKey) =>
    (await t.request('GET', '/v1/account/transactions?limit=1000', { apiKey })).body.transactions as {
      transaction_type: string;
      credits: number;
    }[];
  const count = async (table: 'jobs' | 'batches') =>
    Number(
      (
        await t.services.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp(
      dialect,
      { PRESSROOM_JOB_POLL_MS: '100', PRESSROOM_RENDER_CONCURRENCY: '2', PRESSROOM_BATCH_MAX_ITEMS: '40' },
      { tuning: { webhooks: { baseDelayMs: 50 } } },
    );
    t.services.startWorkers();
    alice = await t.createAccount({ credits: 100, plan: 'enterprise' });
    bob = await t.createAccount({ credits: 2, plan: 'enterprise' });
    templateId = (
      await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'Certificate', html: LETTER, fields: FIELDS },
      })
    ).body.id;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('a 3-row CSV as a zip: three PDFs, each with its row; charged three credits; a signed pdf.batch.completed webhook', async () => {
    const before = await balance();
    receiver.script([200]);
    const res = await start({
      template_id: templateId,
      items_csv: CSV,
      output: 'zip',
      filename: 'certificates',
      webhook_url: receiver.url,
      webhook_secret: SECRET,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toEqual({
      batch_id: expect.stringMatching(/^bat_/),
      status: 'pending',
      total: 3,
      credits_remaining: before - 3,
    });
    const done = await finished(res.body.batch_id);
    expect(done).toMatchObject({
      status: 'completed',
      total: 3,
      completed: 3,
      failed: 0,
      cancelled: 0,
      pending: 0,
      output: 'zip',
      error: null,
    });
    expect(done.result.filename).toBe('certificates.zip');
    const entries = unzip(await download(done.result.url));
    expect([...entries.keys()].sort()).toEqual(['ada.pdf', 'alan.pdf', 'grace.pdf']);
    expect(await pdfText(entries.get('ada.pdf')!)).toMatch(
      /Certificate for Ada Lovelace[\s\S]*Hours: 12.5[\s\S]*With honours/,
    );
    expect(await pdfText(entries.get('grace.pdf')!)).toMatch(/Certificate for Hopper, Grace[\s\S]*Hours: 8/);
    expect(await pdfText(entries.get('grace.pdf')!)).not.toContain('With honours');
    expect(await pdfText(entries.get('alan.pdf')!)).toContain('Certificate for Alan Turing');
    expect(await balance()).toBe(before - 3);

    await until(
      () => receiver.received.some((h) => JSON.parse(h.raw.toString()).batch_id === res.body.batch_id),
      30_000,
      'the batch webhook',
    );
    const hook = receiver.received.find((h) => JSON.parse(h.raw.toString()).batch_id === res.body.batch_id)!;
    expect(hook.headers['x-service-signature']).toBe(
      createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(hook.raw).digest('hex'),
    );
    expect(JSON.parse(hook.raw.toString())).toMatchObject({
      event: 'pdf.batch.completed',
      status: 'completed',
      total: 3,
      completed: 3,
      failed: 0,
      cancelled: 0,
      result: { filename: 'certificates.zip' },
    });
  });

  it('merged: one PDF with every row in order and an outline entry per item', async () => {
    const res = await start({
      template_id: templateId,
      items: [
        { data: { name: 'First', hours: 1 } },
        { data: { name: 'Second', hours: 2 }, filename: 'second' },
        { data: { name: 'Third', hours: '3' } },
      ],
      output: 'merged',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await finished(res.body.batch_id);
    expect(done.status).toBe('completed');
    const pdf = await download(done.result.url);
    expect(await pdfText(pdf)).toMatch(
      /Certificate for First[\s\S]*Certificate for Second[\s\S]*Certificate for Third/,
    );
    expect(outlineTitles(pdf)).toEqual(['document-1@1', 'second@2', 'document-3@3']);
  });

  it('zip entries are unique whatever their case, after every rename: a, a-3, a, Report, report give five files (issue 49)', async () => {
    const named = ['a', 'a-3', 'a', 'Report', 'report'];
    const res = await start({
      template_id: templateId,
      output: 'zip',
      items: named.map((filename, i) => ({ data: { name: `Named ${i + 1}`, hours: i }, filename })),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await finished(res.body.batch_id);
    expect(done.status).toBe('completed');
    const entries = unzip(await download(done.result.url));
    expect([...entries.keys()].sort()).toEqual(['Report.pdf', 'a-3-2.pdf', 'a-3.pdf', 'a.pdf', 'report-5.pdf']);
    // Each row's document is there once: none overwrote another.
    const texts = await Promise.all(
      [...entries.values()].map(async (pdf) => /Certificate for (Named \d)/.exec(await pdfText(pdf))?.[1]),
    );
    expect(texts.sort()).toEqual(['Named 1', 'Named 2', 'Named 3', 'Named 4', 'Named 5']);
  });

  it("split's zip holds two parts of the same pages as two entries (issue 49)", async () => {
    const pdf = (
      await t.request('POST', '/v1/pdf/create', {
        apiKey: alice.apiKey,
        body: { template_id: templateId, data: { name: 'Split', hours: 1 }, export_type: 'binary' },
      })
    ).bytes;
    const res = await t.request('POST', '/v1/pdf-tools/split', {
      apiKey: alice.apiKey,
      body: { pdf_base64: pdf.toString('base64'), ranges: ['1', '1-1'], export_type: 'zip', filename: 'twice' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect([...unzip(await download(res.body.url)).keys()].sort()).toEqual(['twice-1-part-2.pdf', 'twice-1.pdf']);
  });

  it("links: each item has its own link, read through the items listing; not among the account's jobs", async () => {
    const jobsBefore = (await t.request('GET', '/v1/pdf/jobs', { apiKey: alice.apiKey })).body.total;
    const res = await start({
      template_id: templateId,
      items_ndjson: '{"name":"Nd One","hours":4}\n\n{"data":{"name":"Nd Two","hours":5},"filename":"two"}\n',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await finished(res.body.batch_id);
    expect(done).toMatchObject({ status: 'completed', output: 'links', result: null });
    const items = (
      await t.request('GET', `/v1/pdf/batches/${res.body.batch_id}/items?status=completed`, { apiKey: alice.apiKey })
    ).body;
    expect(items.total).toBe(2);
    expect(items.items.map((i: any) => [i.index, i.status, i.filename])).toEqual([
      [0, 'completed', 'document-1.pdf'],
      [1, 'completed', 'two.pdf'],
    ]);
    expect(await pdfText(await download(items.items[1].url))).toContain('Certificate for Nd Two');
    expect((await t.request('GET', '/v1/pdf/jobs', { apiKey: alice.apiKey })).body.total).toBe(jobsBefore);
    const listed = (await t.request('GET', '/v1/pdf/batches?limit=100', { apiKey: alice.apiKey })).body;
    expect(listed.batches.map((b: any) => b.batch_id)).toContain(res.body.batch_id);
  });

  it('finishing as on create, on every item: a watermark and the document information (issue 39 on the batch path)', async () => {
    const res = await start({
      template_id: templateId,
      items: [{ data: { name: 'Marked One', hours: 1 } }, { data: { name: 'Marked Two', hours: 2 } }],
      output: 'zip',
      watermark: { text: 'BATCH DRAFT', opacity: 0.2 },
      metadata: { title: 'Attendance certificate', author: 'Pressroom tests' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const done = await finished(res.body.batch_id);
    expect(done.status).toBe('completed');
    const entries = unzip(await download(done.result.url));
    for (const [name, pdf] of entries) {
      expect(await pdfText(pdf), name).toMatch(
        /Certificate for Marked (One|Two)[\s\S]*BATCH DRAFT|BATCH DRAFT[\s\S]*Certificate for Marked (One|Two)/,
      );
      expect(execFileSync('pdfinfo', ['-'], { input: pdf }).toString()).toMatch(
        /Title:\s+Attendance certificate[\s\S]*Author:\s+Pressroom tests/,
      );
    }
  });

  it('a bad row is a 422 naming the row and field; nothing charged, no batch, no item', async () => {
    const [before, batches, jobs, transactions] = [
      await balance(),
      await count('batches'),
      await count('jobs'),
      (await ledger()).length,
    ];
    const bad = await start({
      template_id: templateId,
      items: [
        { data: { name: 'Ok', hours: 1 } },
        { data: { name: 'No hours' } },
        { data: { name: 'Bad', hours: 'twelve' } },
      ],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual([
      { loc: ['body', 'items', 1, 'data', 'hours'], msg: 'Field required by the template', type: 'missing' },
      { loc: ['body', 'items', 2, 'data', 'hours'], msg: 'Expected a number, got "twelve"', type: 'number_type' },
    ]);
    const csv = await start({ template_id: templateId, items_csv: 'name,hours,honours\nA,1,maybe\n,2,\n' });
    expect(csv.status).toBe(422);
    expect(csv.body.detail).toEqual([
      {
        loc: ['body', 'items_csv', 'line', 2, 'column', 'honours'],
        msg: 'Expected true or false, got "maybe"',
        type: 'bool_type',
      },
      {
        loc: ['body', 'items_csv', 'line', 3, 'column', 'name'],
        msg: 'Field required by the template',
        type: 'missing',
      },
    ]);
    const both = await start({ template_id: templateId, items: [{ data: { name: 'A', hours: 1 } }], items_csv: CSV });
    expect(both.status).toBe(422);
    // PRESSROOM_BATCH_MAX_ITEMS is 40 here: 41 rows are refused whole, as items and as CSV.
    const many = await start({
      template_id: templateId,
      items: Array.from({ length: 41 }, () => ({ data: { name: 'N', hours: 1 } })),
    });
    expect([many.status, many.body.detail[0].loc, many.body.detail[0].type]).toEqual([
      422,
      ['body', 'items'],
      'too_many_items',
    ]);
    const longCsv = await start({ template_id: templateId, items_csv: `name,hours\n${'N,1\n'.repeat(41)}` });
    expect([longCsv.status, longCsv.body.detail[0].loc]).toEqual([422, ['body', 'items_csv']]);
    expect([await balance(), await count('batches'), await count('jobs'), (await ledger()).length]).toEqual([
      before,
      batches,
      jobs,
      transactions,
    ]);
  });

  it('402 when the account cannot cover the whole batch; nothing queued', async () => {
    const [batches, jobs] = [await count('batches'), await count('jobs')];
    const res = await start({ template_id: templateId, items_csv: CSV }, bob.apiKey);
    expect(res.status).toBe(403); // bob cannot use alice's template
    const own = (
      await t.request('POST', '/v1/templates', {
        apiKey: bob.apiKey,
        body: { name: 'Bob', html: LETTER, fields: FIELDS },
      })
    ).body.id;
    const poor = await start({ template_id: own, items_csv: CSV }, bob.apiKey);
    expect(poor.status).toBe(402);
    expect(poor.body.error).toBe('INSUFFICIENT_CREDITS');
    expect(await balance(bob.apiKey)).toBe(2);
    expect([await count('batches'), await count('jobs')]).toEqual([batches, jobs]);
  });

  it('takes the rows as an uploaded CSV file (multipart), with the other fields as form fields', async () => {
    const form = new FormData();
    form.set('template_id', templateId);
    form.set('output', 'links');
    form.set('options', JSON.stringify({ expiration: 600 }));
    form.set('rows', new Blob([CSV], { type: 'text/csv' }), 'march.csv');
    const res = await fetch(`${t.baseUrl}/v1/pdf/batches`, {
      method: 'POST',
      headers: { 'x-api-key': alice.apiKey },
      body: form,
    });
    const body = (await res.json()) as Record<string, any>;
    expect(res.status, JSON.stringify(body)).toBe(202);
    expect(body.total).toBe(3);
    const ended = await finished(body.batch_id);
    const items = (await t.request('GET', `/v1/pdf/batches/${body.batch_id}/items`, { apiKey: alice.apiKey })).body
      .items;
    expect(items.map((i: any) => i.filename)).toEqual(['ada.pdf', 'grace.pdf', 'alan.pdf']);
    // options.expiration (600 s) took effect: the link expires 600 s after the item was stored, which is
    // between the batch's acceptance and its end (the service's own timestamps, not the test's clock).
    const expires = Date.parse(items[0].expires_at);
    expect(expires).toBeGreaterThanOrEqual(Date.parse(ended.created_at) + 599_000); // links count whole seconds
    expect(expires).toBeLessThanOrEqual(Date.parse(ended.completed_at) + 601_000);
    expect(await pdfText(await download(items[2].url))).toContain('Certificate for Alan Turing');

    const bad = new FormData();
    bad.set('template_id', templateId);
    bad.set('rows', new Blob(['name,hours\nX,lots\n'], { type: 'text/csv' }), 'bad.csv');
    const refused = await fetch(`${t.baseUrl}/v1/pdf/batches`, {
      method: 'POST',
      headers: { 'x-api-key': alice.apiKey },
      body: bad,
    });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as any).detail[0]).toEqual({
      loc: ['body', 'rows', 'line', 2, 'column', 'hours'],
      msg: 'Expected a number, got "lots"',
      type: 'number_type',
    });
  });

  it("another account's batch is not found", async () => {
    const res = await start({ template_id: templateId, items: [{ data: { name: 'Mine', hours: 1 } }] });
    expect((await batch(res.body.batch_id, bob.apiKey)).status).toBe(404);
    expect(
      (await t.request('POST', `/v1/pdf/batches/${res.body.batch_id}/cancel`, { apiKey: bob.apiKey })).status,
    ).toBe(404);
    expect((await t.request('GET', `/v1/pdf/batches/${res.body.batch_id}/items`, { apiKey: bob.apiKey })).status).toBe(
      404,
    );
  });
  // Last: it stops the workers.
  it('cancel stops the items not started, each refunded; the delivered ones stay charged', async () => {
    const before = await balance();
    const items = Array.from({ length: 40 }, (_, i) => ({ data: { name: `Row ${i}`, hours: i } }));
    const res = await start({ template_id: templateId, items });
    expect(res.status).toBe(202);
    // Hold the workers once the first item is done, so the cancel finds items that have not started.
    await until(async () => (await batch(res.body.batch_id)).body.completed >= 1, 120_000, 'a first item');
    await t.services.stopWorkers();
    const cancelling = await t.request('POST', `/v1/pdf/batches/${res.body.batch_id}/cancel`, { apiKey: alice.apiKey });
    expect(cancelling.status).toBe(200);
    // The answer says the cancel is under way; the refunds follow in chunks.
    expect(cancelling.body.status).toBe('cancelling');
    const cancelled = { body: await finished(res.body.batch_id) };
    expect(cancelled.body.status).toBe('cancelled');
    const { completed, failed, cancelled: stopped } = cancelled.body;
    expect(stopped).toBeGreaterThan(0);
    expect(completed + failed + stopped).toBe(40);
    expect(await balance()).toBe(before - completed);
    const listed = (
      await t.request('GET', `/v1/pdf/batches/${res.body.batch_id}/items?status=cancelled&limit=1000`, {
        apiKey: alice.apiKey,
      })
    ).body;
    expect(listed.total).toBe(stopped);
    expect(listed.items[0].error.code).toBe('BATCH_CANCELLED');
    // A second cancel changes nothing.
    expect(
      (await t.request('POST', `/v1/pdf/batches/${res.body.batch_id}/cancel`, { apiKey: alice.apiKey })).body.cancelled,
    ).toBe(stopped);
    expect(await balance()).toBe(before - completed);
  });
});
