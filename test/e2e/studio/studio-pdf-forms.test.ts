/**
 * Fillable PDF form templates in the studio (issue 54): the real service in-process (SQLite), the built
 * studio in Debian's Chromium, forms made here with pdf-lib (never committed files). A form dropped in
 * the "New template" dialog becomes a template whose editor lists its fields with their kinds; the data
 * form generated from them fills the free, stamped preview; Run fills it for real (pdftotext reads the
 * values); a PDF without fields is refused in the dialog, saying why, and nothing is made.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { PDFDocument, PDFName, PDFString } from '@cantoo/pdf-lib';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import {
  DESKTOP,
  PHONE,
  capturePreviews,
  ensureStudioBuild,
  hasNoHorizontalOverflow,
  launchBrowser,
  layoutSettled,
  openStudio,
  screenshot,
  signIn,
  type StudioPage,
} from './studio-browser.js';

/** A customs form: a required text field with a tooltip, a checkbox and a dropdown. */
async function customsForm(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([600, 800]);
  const form = doc.getForm();
  page.drawText('Customs declaration', { x: 50, y: 760, size: 18 });
  const name = form.createTextField('customer.name');
  name.enableRequired();
  name.addToPage(page, { x: 50, y: 700, width: 300, height: 24 });
  name.acroField.dict.set(PDFName.of('TU'), PDFString.of('Customer name'));
  form.createCheckBox('agree').addToPage(page, { x: 50, y: 660, width: 20, height: 20 });
  const country = form.createDropdown('country');
  country.addOptions(['France', 'Japan', 'Poland']);
  country.addToPage(page, { x: 50, y: 620, width: 200, height: 24 });
  return Buffer.from(await doc.save());
}

/** A PDF with a page and no form. */
async function plainPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([300, 300]).drawText('No form here', { x: 20, y: 150 });
  return Buffer.from(await doc.save());
}

const pdfFile = (name: string, buffer: Buffer) => ({ name, mimeType: 'application/pdf', buffer });

describe('studio: fillable PDF form templates', { timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let alice: { accountId: string; apiKey: string };
  const open: StudioPage[] = [];

  const credits = async () => (await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).body.credits as number;
  const templateCount = async () =>
    ((await t.request('GET', '/v1/templates', { apiKey: alice.apiKey })).body.templates as unknown[]).length;

  beforeAll(async () => {
    ensureStudioBuild();
    t = await startTestApp('sqlite');
    alice = await t.createAccount({ credits: 20, email: 'alice@example.com', plan: 'pro' });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    for (const s of open) await s.context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  it('makes a template of a dropped form, lists its fields, previews and runs it filled from the data form', async () => {
    const s = await openStudio(browser, t.baseUrl);
    open.push(s);
    const { page, problems } = s;
    await signIn(page, alice.apiKey, '/templates');

    // The dialog: kind "Fillable PDF form", the PDF given to its file input; the name follows the file's.
    await page.getByRole('button', { name: 'New template' }).click();
    const dialog = page.getByRole('dialog', { name: 'New template' });
    await dialog.getByLabel('Fillable PDF form').check();
    expect(await dialog.getByRole('button', { name: 'Create' }).isDisabled()).toBe(true);
    await dialog.locator('#create-form-pdf').setInputFiles([pdfFile('customs.pdf', await customsForm())]);
    expect(await dialog.getByTestId('form-pdf-chosen').innerText()).toContain('customs.pdf');
    expect(await dialog.getByLabel('Template name').inputValue()).toBe('customs');
    await dialog.getByLabel('Template name').fill('Customs declaration');
    await dialog.getByRole('button', { name: 'Create' }).click();

    // The editor says what it is, with the fields and their kinds; no HTML pane.
    const panel = page.getByRole('region', { name: 'Fillable PDF form' });
    await panel.waitFor();
    expect(await panel.getByTestId('form-explainer').innerText()).toContain(
      'The studio cannot edit the PDF itself — upload a new one to change it',
    );
    expect(await panel.getByTestId('form-facts').innerText()).toContain('1 page, 3 fields');
    const rows = panel.getByTestId('form-field');
    await expect.poll(() => rows.count()).toBe(3);
    const row = (key: string) => panel.locator(`[data-testid="form-field"][data-key="${key}"]`);
    expect(await row('customer.name').innerText()).toMatch(/Customer name[\s\S]*Text[\s\S]*Required/);
    expect(await row('agree').innerText()).toMatch(/Checkbox[\s\S]*Optional/);
    expect(await row('country').innerText()).toMatch(/Choice: “France”, “Japan”, “Poland”[\s\S]*Optional/);
    expect(await page.locator('[data-editor="editor-html"]').count()).toBe(0);
    const templateId = new URL(page.url()).pathname.split('/').pop()!;

    // The data form, generated from the fields: a text input, a checkbox, a list of the options. The
    // preview that answers has all three values (each change restarts the preview's wait).
    const previews = await capturePreviews(page);
    const filled = previews.next(60_000, (body) => {
      const data = (body.data ?? {}) as Record<string, unknown>;
      return body.template_id === templateId && data.country === 'Japan' && data.agree === true;
    });
    await page.getByLabel('Customer name').fill('Grace Hopper');
    await page.getByLabel('agree').check();
    await page.getByLabel('country').selectOption('Japan');
    const previewText = pdfText(await filled);
    expect(previewText).toContain('Grace Hopper');
    expect(previewText).toContain('Japan');
    expect(previewText).toMatch(/P\s*R\s*E\s*V\s*I\s*E\s*W/);
    const status = page.getByTestId('preview-status');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 60_000 }).toBe('ready');
    expect(await page.locator('.preview iframe').count()).toBe(1);
    // The same preview as the API answers it: a PDF, free.
    const before = await credits();
    const direct = await t.request('POST', '/v1/templates/preview', {
      apiKey: alice.apiKey,
      body: { template_id: templateId, data: { country: 'France' } },
    });
    expect(direct.status).toBe(200);
    expect(direct.headers.get('content-type')).toBe('application/pdf');
    expect(pdfText(direct.bytes)).toContain('France');
    // The required name left empty: a warning, and a blank, not a refusal.
    expect(direct.headers.get('x-pressroom-warnings')).toBe('1');
    expect(await credits()).toBe(before);

    // Save keeps the data as the template's sample data.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByTestId('save-state').innerText()).toBe('Saved');
    const saved = await t.request('GET', `/v1/templates/${templateId}`, { apiKey: alice.apiKey });
    expect(saved.body).toMatchObject({
      name: 'Customs declaration',
      kind: 'pdf_form',
      sample_data: { customer: { name: 'Grace Hopper' }, agree: true, country: 'Japan' },
    });

    // Run: no PDF/UA or e-invoice offered for a form; the PDF is the form filled (and not stamped).
    const run = page.getByRole('region', { name: 'Run', exact: true });
    expect(await run.getByTestId('run-form-note').innerText()).toContain('PDF/UA');
    expect(await run.getByTestId('run-pdf-ua').count()).toBe(0);
    await run.getByLabel('PDF file').check();
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 60_000 }),
      run.getByRole('button', { name: 'Generate PDF' }).click(),
    ]);
    const text = pdfText(readFileSync((await download.path())!));
    expect(text).toContain('Grace Hopper');
    expect(text).toContain('Japan');
    expect(text).not.toMatch(/P\s*R\s*E\s*V\s*I\s*E\s*W/);
    expect(await credits()).toBe(before - 1);

    // At a desktop's width and a phone's: nothing scrolls sideways.
    await panel.scrollIntoViewIfNeeded();
    await layoutSettled(page);
    expect(await hasNoHorizontalOverflow(page)).toMatchObject({ ok: true });
    await screenshot(page, 'pdf-form-editor');
    await page.setViewportSize(PHONE);
    await layoutSettled(page);
    expect(await hasNoHorizontalOverflow(page)).toMatchObject({ ok: true });
    await panel.scrollIntoViewIfNeeded();
    await screenshot(page, 'phone-pdf-form-editor');
    await page.setViewportSize(DESKTOP);
    expect(problems).toEqual([]);
  });

  it('refuses a PDF without a form in the dialog, saying why, and makes nothing', async () => {
    const s = await openStudio(browser, t.baseUrl);
    open.push(s);
    const { page, problems } = s;
    await signIn(page, alice.apiKey, '/templates');
    const count = await templateCount();
    await page.getByRole('button', { name: 'New template' }).click();
    const dialog = page.getByRole('dialog', { name: 'New template' });
    await dialog.getByLabel('Fillable PDF form').check();
    await dialog.locator('#create-form-pdf').setInputFiles([pdfFile('letter.pdf', await plainPdf())]);
    await dialog.getByRole('button', { name: 'Create' }).click();
    const refusal = dialog.getByTestId('create-error');
    await refusal.waitFor({ timeout: 60_000 });
    expect(await refusal.innerText()).toContain('Not created: The PDF (letter.pdf): The PDF has no fillable form');
    expect(await dialog.isVisible()).toBe(true);
    expect(await templateCount()).toBe(count);
    await layoutSettled(page);
    await screenshot(page, 'pdf-form-refused');
    await page.setViewportSize(PHONE);
    await layoutSettled(page);
    expect(await hasNoHorizontalOverflow(page)).toMatchObject({ ok: true });
    await screenshot(page, 'phone-pdf-form-refused');
    expect(problems).toEqual([]);
  });
});
