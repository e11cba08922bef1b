/**
 * `PRESSROOM_PRINT_BROWSERS=per-slot` through the API, with real Chromium, on SQLite and PostgreSQL:
 * invoices print in the render slots' own single-process browsers (synchronously and as jobs), hold
 * the data sent, tagged or not, and are charged once each; a document with a script still prints (on
 * the multi-process browser); `/metrics` counts the print browsers started.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/databases.js';
import { pdfInfo, pdfText } from '../support/pdf-tools.js';
import { completedJobPdf, createTemplates, startTestApp, type TestApp } from '../support/test-app.js';

const INVOICE = `<html><head><title>Invoice {{ number }}</title></head><body>
<h1>Invoice {{ number }}</h1><table>{% for line in lines %}<tr><td>{{ line.item }}</td><td>{{ line.amount }}</td></tr>{% endfor %}</table></body></html>`;
const SCRIPTED = '<p id="out"></p><script>document.getElementById("out").textContent = "Total " + (40 + 2);</script>';

describe.each(DIALECTS)('per-slot print browsers on %s', (dialect) => {
  let t: TestApp;
  let account: { accountId: string; apiKey: string };
  let ids: Record<'invoice' | 'untagged' | 'scripted', string>;

  const balance = async () => (await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits as number;
  const create = async (templateId: string, data: Record<string, unknown>): Promise<Buffer> => {
    const res = await t.request('POST', '/v1/pdf/create', { apiKey: account.apiKey, body: { template_id: templateId, data, export_type: 'binary' } });
    expect(res.status, res.bytes.toString('utf8', 0, 300)).toBe(200);
    return res.bytes;
  };

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_PRINT_BROWSERS: 'per-slot', PRESSROOM_RENDER_CONCURRENCY: '2', PRESSROOM_JOB_POLL_MS: '100' });
    t.services.startWorkers();
    account = await t.createAccount({ credits: 20, plan: 'enterprise' });
    ids = await createTemplates(t, account.apiKey, {
      invoice: { name: 'Invoice', html: INVOICE },
      untagged: { name: 'Invoice, untagged', html: INVOICE, page: { format: 'A4', tagged: false } },
      scripted: { name: 'Scripted', html: SCRIPTED },
    });
  }, 120_000);
  afterAll(async () => t?.close());

  it('prints invoices side by side with the data sent, tagged or not, each charged once', async () => {
    const before = await balance();
    const lines = [{ item: 'Paper, 500 sheets', amount: '4.20' }, { item: 'Toner', amount: '61.00' }];
    const [tagged, untagged] = await Promise.all([create(ids.invoice, { number: 'PS-1', lines }), create(ids.untagged, { number: 'PS-2', lines })]);
    expect(pdfText(tagged)).toMatch(/Invoice PS-1[\s\S]*Paper, 500 sheets[\s\S]*61\.00/);
    expect(pdfText(untagged)).toContain('Invoice PS-2');
    expect(pdfInfo(tagged).Tagged).toBe('yes');
    expect(pdfInfo(untagged).Tagged).toBe('no');
    expect(await balance()).toBe(before - 2);
    const metrics = (await t.request('GET', '/metrics')).body as string;
    const launched = Number(/^pressroom_print_browser_launches_total (\d+)$/m.exec(metrics)?.[1]);
    expect(launched).toBeGreaterThanOrEqual(1);
    // Exported beside it; no print here waited past its allowance.
    expect(metrics).toMatch(/^pressroom_print_browser_stalls_total 0$/m);
  });

  it('renders a job and a document with a script', async () => {
    const before = await balance();
    const res = await t.request('POST', '/v1/pdf/create-async', { apiKey: account.apiKey, body: { template_id: ids.invoice, data: { number: 'PS-3', lines: [] } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(pdfText(await completedJobPdf(t, account.apiKey, res.body.job_id, 120_000))).toContain('Invoice PS-3');
    expect(pdfText(await create(ids.scripted, {}))).toContain('Total 42');
    expect(await balance()).toBe(before - 2);
  });
});
