/**
 * E-invoices in the studio (issue 16), end to end: the real service in-process (SQLite), the built
 * studio, Debian's Chromium driven by playwright-core. The starter "Invoice (Factur-X EN 16931)" run
 * with its own data attached as the invoice gives a PDF whose embedded factur-x.xml (qpdf) and text
 * (pdftotext) carry the same invoice; a broken invoice shows its findings by rule and costs nothing;
 * XRechnung answers its XML.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Download, Page } from 'playwright-core';
import { pdfAttachments, pdfText, pdfXmp } from '../../support/documents/pdf-tools.js';
import { warmUpPatiently } from '../../support/documents/rendering-kit.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { SAMPLE_INVOICE } from '../../support/documents/einvoice-samples.js';
import {
  ensureStudioBuild,
  launchBrowser,
  lintMarkerLines,
  openStudio,
  screenshot,
  setEditorText,
  signIn,
  type StudioPage,
} from './studio-browser.js';

/** Runs `action` and returns the bytes of the download it starts. */
async function downloaded(page: Page, action: () => Promise<unknown>): Promise<Buffer> {
  const [download] = (await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), action()])) as [
    Download,
    unknown,
  ];
  return readFile((await download.path())!);
}

describe('e-invoices in the studio', { timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let alice: { accountId: string; apiKey: string };
  const open: StudioPage[] = [];

  const credits = async () => (await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).body.credits as number;
  const ledgerSize = async () =>
    (
      (await t.request('GET', '/v1/account/transactions?limit=1000', { apiKey: alice.apiKey })).body
        .transactions as unknown[]
    ).length;

  beforeAll(async () => {
    ensureStudioBuild();
    t = await startTestApp('sqlite');
    alice = await t.createAccount({ credits: 20, email: 'alice@example.com', plan: 'pro' });
    [browser] = await Promise.all([launchBrowser(), warmUpPatiently(t.services.renderer)]);
  });

  afterAll(async () => {
    for (const s of open) await s.context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  /** Signs in, creates a template from the e-invoice starter and waits for its editor. */
  async function createStarter(name: string): Promise<{ page: Page; problems: string[]; id: string }> {
    const s = await openStudio(browser, t.baseUrl);
    open.push(s);
    const { page } = s;
    await signIn(page, alice.apiKey);
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByLabel('Invoice (Factur-X EN 16931)').check();
    await screenshot(page, 'einvoice-new-template');
    await page.getByLabel('Template name').fill(name);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/\/templates\/[A-Za-z0-9_-]{12}$/);
    return { ...s, id: page.url().split('/').pop()! };
  }

  it("runs the starter with its data attached as Factur-X EN 16931, then shows a broken invoice's findings by rule and charges nothing", async () => {
    const { page, problems, id } = await createStarter('Factur-X invoice');
    const saved = (await t.request('GET', `/v1/templates/${id}`, { apiKey: alice.apiKey })).body;
    // The starter's sample data is the invoice itself, as the API's model has it.
    expect(saved.sample_data).toEqual(SAMPLE_INVOICE);
    // The form asks for the invoice's fields, not for what the service fills in (einvoice.totals).
    const form = page.getByRole('form', { name: 'Template data' });
    await form.getByLabel('Seller name').waitFor();
    expect(await form.getByLabel('Einvoice totals').count()).toBe(0);
    expect(await form.innerText()).toContain('einvoice.totals: filled in by the service');

    const run = page.getByRole('region', { name: 'Run' });
    await run.getByLabel('PDF file').check();
    await run.getByLabel('Attach an e-invoice (EN 16931)').check();
    expect(await run.getByLabel('Format', { exact: true }).inputValue()).toBe('factur-x');
    expect(await run.getByLabel('Profile', { exact: true }).inputValue()).toBe('en16931');
    expect(await run.getByLabel("The template's data").isChecked()).toBe(true);
    await run.getByRole('group', { name: 'E-invoice' }).evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await screenshot(page, 'einvoice-run');
    // The snippets send the same e-invoice.
    expect(await run.locator('pre').first().innerText()).toContain('"format": "factur-x"');
    const before = await credits();

    const pdf = await downloaded(page, () => run.getByRole('button', { name: 'Generate PDF' }).click());
    const attachments = pdfAttachments(pdf);
    expect(Object.keys(attachments)).toEqual(['factur-x.xml']);
    const xml = attachments['factur-x.xml']!;
    expect(xml).toContain('<ram:ID>RE-2026-0042</ram:ID>');
    expect(xml).toContain('<ram:GrandTotalAmount>1460.21</ram:GrandTotalAmount>');
    expect(pdfXmp(pdf)).toMatch(/ConformanceLevel>EN 16931</);
    // The readable page shows the same invoice and the same total as the XML.
    const text = pdfText(pdf);
    expect(text).toContain('Invoice RE-2026-0042');
    expect(text).toContain('Druckerei Beispiel GmbH');
    expect(text).toContain('€1,460.21');
    expect(await page.getByTestId('einvoice-result').innerText()).toContain(
      'Factur-X EN 16931, its XML embedded as factur-x.xml',
    );
    await expect.poll(credits).toBe(before - 1);
    await expect.poll(() => page.getByTestId('credits').innerText()).toContain(String(before - 1));

    // Broken, in the invoice's own JSON: a wrong total sent and an unknown unit code.
    await run.getByLabel('Its own JSON').check();
    const broken = structuredClone(SAMPLE_INVOICE);
    broken.totals = { tax_inclusive: 1460.2 };
    broken.lines[1]!.unit_code = 'PCE';
    const brokenText = JSON.stringify(broken, null, 2);
    const lineOf = (needle: string) => brokenText.split('\n').findIndex((l) => l.includes(needle)) + 1;
    await setEditorText(page, 'einvoice-invoice', brokenText);
    const ledger = await ledgerSize();
    await run.getByRole('button', { name: 'Generate PDF' }).click();
    const findings = page.getByTestId('einvoice-findings');
    await findings.waitFor({ timeout: 60_000 });
    const byRule = async (rule: string) => findings.locator(`[data-rule="${rule}"]`).innerText();
    // Places in the invoice's own JSON, rows counted from 1 as the form counts them.
    expect(await byRule('BR-CO-15')).toContain('totals › tax_inclusive');
    expect(await byRule('BR-CL-23')).toContain('lines row 2 › unit_code');
    expect(await findings.innerText()).toContain(`Nothing was charged (balance: ${before - 1} credits)`);
    // Each finding is marked at its field's line in the invoice's JSON.
    await expect
      .poll(async () => (await lintMarkerLines(page, 'einvoice-invoice')).sort((a, b) => a - b))
      .toEqual([lineOf('"unit_code": "PCE"'), lineOf('"tax_inclusive": 1460.2')]);
    await screenshot(page, 'einvoice-findings');
    expect(await credits()).toBe(before - 1);
    expect(await ledgerSize()).toBe(ledger);
    expect(await page.getByTestId('credits').innerText()).toContain(String(before - 1));
    expect(problems).toEqual([]);
  });

  it('answers XRechnung (UBL) as its XML, without a profile, through a download link', async () => {
    const { page, problems } = await createStarter('XRechnung invoice');
    const run = page.getByRole('region', { name: 'Run' });
    await run.getByLabel('Attach an e-invoice (EN 16931)').check();
    await run.getByLabel('Format', { exact: true }).selectOption('xrechnung-ubl');
    expect(await run.getByLabel('Profile', { exact: true }).count()).toBe(0);
    const before = await credits();
    await run.getByRole('button', { name: 'Generate XML' }).click();
    const link = page.getByTestId('result-link');
    await link.waitFor({ timeout: 60_000 });
    // Named after the template (no file name typed).
    expect(await link.innerText()).toBe('XRechnung-invoice.xml');
    const href = new URL((await link.getAttribute('href'))!);
    const file = await t.request('GET', `${href.pathname}${href.search}`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toContain('xml');
    expect(file.bytes.toString('utf8')).toContain('<cbc:ID>RE-2026-0042</cbc:ID>');
    expect(await page.getByTestId('einvoice-result').innerText()).toContain('XRechnung (UBL): the XML itself');
    expect(await credits()).toBe(before - 1);
    expect(problems).toEqual([]);
  });
});
