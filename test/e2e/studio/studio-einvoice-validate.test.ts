/**
 * The official e-invoice rules in the studio (issue 41), end to end: the real service in-process
 * (SQLite) with the rules pack installed as an operator installs it (installRulesPack, from
 * ../shared/einvoice-rules), the built studio, Debian's Chromium driven by playwright-core.
 * - Validate e-invoice: an official example XML dropped on the screen is valid with every check
 *   passed; a copy without its BuyerReference breaks BR-DE-15, shown with its message and XPath; a
 *   Factur-X PDF the service made names its embedded factur-x.xml and its profile; a PDF without an
 *   invoice (picked) is refused in the service's words; a service without the pack says so (503).
 *   All free: the account's credits and transactions stay as they were.
 * - Run: a template whose data breaks an official rule only KoSIT's schematron knows (BR-DE-18, a
 *   malformed Skonto line) shows that rule id with its rule set, nothing charged; a delivered
 *   XRechnung says which rules judged it and lists their warnings by rule (BR-DE-27).
 * Skipped, as the rules tests' official examples are, when ../shared/einvoice-rules is absent.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { SAMPLE_INVOICE } from '../../support/documents/einvoice-samples.js';
import { EXAMPLES, HAS_SHARED_RULES, INSTALL_TIMEOUT_MS, installRulesPack } from '../../support/einvoice-rules.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import {
  PHONE,
  ensureStudioBuild,
  hasNoHorizontalOverflow,
  launchBrowser,
  layoutSettled,
  openStudio,
  screenshot,
  setEditorText,
  signIn,
  type StudioPage,
} from './studio-browser.js';

// Callbacks passed to page.evaluateHandle run in the browser; the test build has no DOM lib.
declare const DataTransfer: any;
declare const File: any;
declare const atob: (data: string) => string;

const XRECHNUNG_CHECKS = 'EN16931 1.3.16 + XRechnung 3.0.2';
/** KoSIT's test suite: an XRechnung 3.0 invoice in CII, valid as published. */
const XRECHNUNG_EXAMPLE = '01.01a-INVOICE_uncefact.xml';

/** Drops a file on the element with `testId` as a person dragging it from the desktop would (a drop event carrying it). */
async function dropFile(
  page: Page,
  testId: string,
  file: { name: string; mimeType: string; buffer: Buffer },
): Promise<void> {
  const dataTransfer = await page.evaluateHandle(
    ({ name, mimeType, base64 }) => {
      const transfer = new DataTransfer();
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      transfer.items.add(new File([bytes], name, { type: mimeType }));
      return transfer;
    },
    { name: file.name, mimeType: file.mimeType, base64: file.buffer.toString('base64') },
  );
  await page.getByTestId(testId).dispatchEvent('drop', { dataTransfer });
}

describe.skipIf(!HAS_SHARED_RULES)('the official e-invoice rules in the studio', { timeout: 300_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let alice: { accountId: string; apiKey: string };
  const open: StudioPage[] = [];

  const studio = async (app: TestApp = t) => {
    const s = await openStudio(browser, app.baseUrl);
    open.push(s);
    return s;
  };
  const credits = async () => (await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).body.credits as number;
  const ledgerSize = async () =>
    (
      (await t.request('GET', '/v1/account/transactions?limit=1000', { apiKey: alice.apiKey })).body
        .transactions as unknown[]
    ).length;
  /** The report on screen once it is for `file` (an earlier file's report is replaced). */
  const reportFor = async (page: Page, file: string) => {
    await page.getByRole('heading', { name: `Report for ${file}` }).waitFor({ timeout: 120_000 });
    return page.getByTestId('validation-report');
  };

  beforeAll(async () => {
    ensureStudioBuild();
    t = await startTestApp('sqlite');
    await installRulesPack(t.config.dataDir);
    alice = await t.createAccount({ credits: 20, email: 'alice@example.com', plan: 'pro' });
    [browser] = await Promise.all([launchBrowser(), t.services.renderer.warmUp()]);
  }, INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    for (const s of open) await s.context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  it('judges a dropped official example, a broken XRechnung and a Factur-X PDF the service made, free of charge', async () => {
    // The Factur-X PDF to judge, made by the service (its 1 credit is spent before the count starts).
    const template = await t.request('POST', '/v1/templates', {
      apiKey: alice.apiKey,
      body: { name: 'Invoice', html: '<h1>Invoice {{ einvoice.invoice.number }}</h1>' },
    });
    const made = await t.request('POST', '/v1/pdf/create', {
      apiKey: alice.apiKey,
      body: {
        template_id: template.body.id,
        data: {},
        export_type: 'binary',
        einvoice: { format: 'factur-x', profile: 'en16931', invoice: SAMPLE_INVOICE },
      },
    });
    expect(made.status).toBe(200);
    const example = readFileSync(join(EXAMPLES.xrechnung, XRECHNUNG_EXAMPLE));
    const broken = example.toString('utf8').replace(/<ram:BuyerReference>[^<]*<\/ram:BuyerReference>/, '');
    expect(broken).not.toBe(example.toString('utf8'));
    const before = { credits: await credits(), ledger: await ledgerSize() };

    const { page, problems } = await studio();
    await signIn(page, alice.apiKey);
    await page.getByRole('link', { name: 'Validate e-invoice' }).click();
    await page.waitForURL(/\/tools\/einvoice$/);
    expect(await page.getByRole('main').innerText()).toContain('Free: no credit is taken');

    // The official example, dropped: valid, each of the three checks passed.
    await dropFile(page, 'einvoice-drop', { name: XRECHNUNG_EXAMPLE, mimeType: 'text/xml', buffer: example });
    let report = await reportFor(page, XRECHNUNG_EXAMPLE);
    // KoSIT's warnings (BR-DE-TMP-32, …) are listed but do not make it invalid.
    expect(await report.getByTestId('validation-verdict').innerText()).toContain(
      `Valid: ${XRECHNUNG_EXAMPLE} passes every check`,
    );
    expect(await report.getByTestId('validation-checks').innerText()).toBe(XRECHNUNG_CHECKS);
    const source = await report.getByTestId('validation-source').innerText();
    expect(source).toContain('the XML file itself');
    expect(source).toContain('UN/CEFACT CII (CrossIndustryInvoice)');
    expect(source).toContain('XRechnung');
    expect(source).toContain('urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0');
    const checks = report.getByTestId('validation-check');
    expect(await checks.count()).toBe(3);
    for (const text of await checks.allInnerTexts()) expect(text).toMatch(/^passed /);
    expect(await checks.nth(2).innerText()).toContain('XRechnung 3.0.2 (KoSIT schematron 2.5.0, CII)');
    await screenshot(page, 'einvoice-validate', { fullPage: true });

    // The same invoice without its buyer reference: BR-DE-15, with KoSIT's message and where it applies.
    await dropFile(page, 'einvoice-drop', {
      name: 'no-buyer-reference.xml',
      mimeType: 'text/xml',
      buffer: Buffer.from(broken),
    });
    report = await reportFor(page, 'no-buyer-reference.xml');
    expect(await report.getByTestId('validation-verdict').innerText()).toContain(
      'Invalid: no-buyer-reference.xml breaks one rule (BR-DE-15)',
    );
    const rule = report.locator('[data-rule="BR-DE-15"]');
    const finding = await rule.innerText();
    expect(finding).toContain('fatal');
    expect(finding).toContain('"Buyer reference" (BT-10) muss übermittelt werden');
    expect(finding).toContain('/rsm:CrossIndustryInvoice[1]');
    expect(await checks.nth(2).getAttribute('data-status')).toBe('failed');
    expect(await checks.nth(0).getAttribute('data-status')).toBe('passed');
    await rule.scrollIntoViewIfNeeded();
    await screenshot(page, 'einvoice-validate-findings', { fullPage: true });

    // A Factur-X PDF, dropped: its embedded factur-x.xml is judged, as Factur-X EN 16931.
    await dropFile(page, 'einvoice-drop', {
      name: 'RE-2026-0042.pdf',
      mimeType: 'application/pdf',
      buffer: made.bytes,
    });
    report = await reportFor(page, 'RE-2026-0042.pdf');
    expect(await report.getByTestId('validation-verdict').innerText()).toBe(
      'Valid: RE-2026-0042.pdf passes every check.',
    );
    const pdfSource = await report.getByTestId('validation-source').innerText();
    expect(pdfSource).toContain("the PDF's embedded factur-x.xml");
    expect(pdfSource).toMatch(/Profile\s+EN 16931/);
    expect(await report.getByTestId('validation-checks').innerText()).toBe('EN16931 1.3.16');

    // A PDF without an invoice, picked: refused in the service's words, naming the file.
    await page
      .getByLabel('E-invoice file (XML or PDF)')
      .setInputFiles([
        { name: 'plain.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.7\n%no invoice here\n') },
      ]);
    await expect
      .poll(() => page.getByTestId('validation-error').innerText(), { timeout: 60_000 })
      .toContain('Not checked: The file (plain.pdf): ');
    expect(await page.getByTestId('validation-error').innerText()).toContain('(pdf_invalid)');
    expect(await page.getByTestId('validation-error').innerText()).toContain(
      'Validation is free: nothing was charged.',
    );
    expect(await page.getByTestId('validation-report').count()).toBe(0);

    // A file that is neither XML nor PDF is named and not sent.
    await page
      .getByLabel('E-invoice file (XML or PDF)')
      .setInputFiles([{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('notes') }]);
    await expect
      .poll(() => page.getByRole('main').innerText())
      .toContain('Not checked, neither XML nor PDF: notes.txt.');

    // Free: no credit, no transaction, and the header's balance as it was.
    expect(await credits()).toBe(before.credits);
    expect(await ledgerSize()).toBe(before.ledger);
    expect(await page.getByTestId('credits').innerText()).toContain(String(before.credits));

    // At phone width the report (long XPaths, the facts list) stays within the screen.
    await dropFile(page, 'einvoice-drop', {
      name: 'no-buyer-reference.xml',
      mimeType: 'text/xml',
      buffer: Buffer.from(broken),
    });
    await reportFor(page, 'no-buyer-reference.xml');
    await page.setViewportSize(PHONE);
    await layoutSettled(page);
    const overflow = await hasNoHorizontalOverflow(page);
    expect(overflow.ok, JSON.stringify(overflow)).toBe(true);
    await screenshot(page, 'einvoice-validate-phone', { fullPage: true });
    expect(problems).toEqual([]);
  });

  it("says up front, in a user's words, when the service has no rules pack, and offers no file to check", async () => {
    const bare = await startTestApp('sqlite');
    try {
      const bob = await bare.createAccount({ credits: 5, plan: 'pro' });
      const { page, problems } = await studio(bare);
      const validations: string[] = [];
      page.on(
        'request',
        (request) => request.url().includes('/v1/einvoice/validate') && validations.push(request.url()),
      );
      await signIn(page, bob.apiKey, '/tools/einvoice');
      await page.getByRole('heading', { name: 'Validate e-invoice' }).waitFor();
      const notice = page.getByTestId('einvoice-unavailable');
      await expect
        .poll(() => notice.innerText(), { timeout: 60_000 })
        .toContain('the official e-invoice rules are not installed on it');
      // No setting names, commands or HTTP paths: those are the operator's, in the README.
      expect(await notice.innerText()).not.toMatch(/PRESSROOM_|pressroom einvoice|POST |\/v1\//);
      expect(await page.getByTestId('einvoice-drop').count()).toBe(0);
      expect(validations).toEqual([]);
      expect((await bare.request('GET', '/v1/account', { apiKey: bob.apiKey })).body.credits).toBe(5);
      expect(problems).toEqual([]);
    } finally {
      await bare.close();
    }
  });

  it("Run shows an official rule the data breaks by its rule id, charging nothing; a delivered XRechnung names its checks and the rules' warnings", async () => {
    // Skonto terms in a form KoSIT's BR-DE-18 refuses: only the official rules know it.
    const data = { ...SAMPLE_INVOICE, payment: { ...SAMPLE_INVOICE.payment, terms: '#SKONTO#TAGE=7#' } };
    const created = await t.request('POST', '/v1/templates', {
      apiKey: alice.apiKey,
      body: { name: 'XRechnung Skonto', html: '<h1>Invoice {{ number }}</h1>', sample_data: data },
    });
    expect(created.status).toBe(201);
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey, `/templates/${created.body.id}`);
    const run = page.getByRole('region', { name: 'Run' });
    await run.getByLabel('Attach an e-invoice (EN 16931)').check();
    await run.getByLabel('Format', { exact: true }).selectOption('xrechnung-cii');
    await run.getByLabel("The template's data").check();
    const before = { credits: await credits(), ledger: await ledgerSize() };

    await run.getByRole('button', { name: 'Generate XML' }).click();
    const findings = page.getByTestId('einvoice-findings');
    await findings.waitFor({ timeout: 120_000 });
    const rule = await findings.locator('[data-rule="BR-DE-18"]').innerText();
    expect(rule).toContain('XRechnung 3.0.2 (KoSIT schematron 2.5.0, CII)');
    expect(rule).toContain('the invoice: Skonto Zeilen');
    expect(rule).toContain('at /rsm:CrossIndustryInvoice[1]');
    expect(await findings.innerText()).toContain(`Nothing was charged (balance: ${before.credits} credits)`);
    await findings.scrollIntoViewIfNeeded();
    await screenshot(page, 'einvoice-run-official-finding');
    expect(await credits()).toBe(before.credits);
    expect(await ledgerSize()).toBe(before.ledger);

    // Its own JSON, with a seller phone of two digits: delivered, judged by the official rules, with KoSIT's warning BR-DE-27.
    await run.getByLabel('Its own JSON').check();
    const warned = {
      ...SAMPLE_INVOICE,
      seller: { ...SAMPLE_INVOICE.seller, contact: { ...SAMPLE_INVOICE.seller.contact, phone: '12' } },
    };
    await setEditorText(page, 'einvoice-invoice', JSON.stringify(warned, null, 2));
    await run.getByRole('button', { name: 'Generate XML' }).click();
    const result = page.getByTestId('einvoice-result');
    await result.waitFor({ timeout: 120_000 });
    expect(await result.getByTestId('einvoice-checks').innerText()).toBe(`Checked by: ${XRECHNUNG_CHECKS}.`);
    const warning = await page.getByTestId('einvoice-warnings').locator('[data-rule="BR-DE-27"]').innerText();
    expect(warning).toContain('BR-DE-27: In BT-42 sollen mindestens drei Ziffern enthalten sein.');
    await page.getByTestId('einvoice-warnings').scrollIntoViewIfNeeded();
    await screenshot(page, 'einvoice-run-checks');
    await expect.poll(credits).toBe(before.credits - 1);
    expect(problems).toEqual([]);
  });
});
