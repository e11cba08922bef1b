/**
 * The studio as a new user met it (issue 43), end to end: the real service in-process (SQLite), the
 * built studio, Debian's Chromium driven by playwright-core. Leaving the editor with unsaved edits
 * asks first, and staying keeps them; a strict template's required field left empty is refused alike
 * by the preview and Run, marked at the field, and a refusal says nothing was charged; an e-invoice
 * finding is marked at its field, its row counted as the form counts; an image template previews on a
 * page of its canvas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { pdfInfo } from '../../support/documents/pdf-tools.js';
import { warmUpPatiently } from '../../support/documents/rendering-kit.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import {
  EINVOICE_STARTER_CSS,
  EINVOICE_STARTER_DATA,
  EINVOICE_STARTER_HTML,
  EINVOICE_STARTER_PAGE,
} from '../../../studio/src/lib/einvoice/starter-einvoice.js';
import { STARTER_IMAGE_CSS, STARTER_IMAGE_DATA, STARTER_IMAGE_HTML } from '../../../studio/src/lib/starter-template.js';
import {
  capturePreviews,
  editorLines,
  ensureStudioBuild,
  launchBrowser,
  openStudio,
  screenshot,
  setEditorText,
  signIn,
  type StudioPage,
} from './studio-browser.js';

// page.evaluate callbacks run in the browser; the test build has no DOM lib.
declare const document: { activeElement: { id: string } | null };

/** A PDF's first page size in points, from pdfinfo. */
function pageSize(pdf: Buffer): { width: number; height: number } {
  const match = /^([\d.]+) x ([\d.]+) pts/.exec(pdfInfo(pdf)['Page size'] ?? '');
  return { width: Number(match?.[1]), height: Number(match?.[2]) };
}

/** A page size within 1.5 pt of the expected one (Chromium rounds the paper to its own units). */
function expectPoints(size: { width: number; height: number }, width: number, height: number): void {
  expect(Math.abs(size.width - width), `width ${size.width}`).toBeLessThanOrEqual(1.5);
  expect(Math.abs(size.height - height), `height ${size.height}`).toBeLessThanOrEqual(1.5);
}

/** Width over height of an element's box on the screen. */
async function boxAspect(page: Page, testId: string): Promise<number> {
  const box = await page.getByTestId(testId).boundingBox();
  return box ? box.width / box.height : Number.NaN;
}

describe('studio: no lost work, one verdict from preview to run', { timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let alice: { accountId: string; apiKey: string };
  const open: StudioPage[] = [];

  const studio = async () => {
    const s = await openStudio(browser, t.baseUrl);
    open.push(s);
    return s;
  };
  const createTemplate = async (body: Record<string, unknown>) => {
    const res = await t.request('POST', '/v1/templates', { apiKey: alice.apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; name: string };
  };
  const savedTemplate = async (id: string) =>
    (await t.request('GET', `/v1/templates/${id}`, { apiKey: alice.apiKey })).body;
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

  it('asks before leaving the editor with unsaved edits (tabs, back link, browser back); staying keeps them, saving or discarding goes', async () => {
    const original = '<h1>Letter</h1>\n<p>First draft</p>';
    const edited = '<h1>Letter</h1>\n<p>Second draft, not saved yet</p>';
    const template = await createTemplate({ name: 'Unsaved letter', html: original });
    const { page, problems } = await studio();
    // Into the editor through the app, so the browser's back button stays inside it.
    await signIn(page, alice.apiKey, '/templates');
    await page.getByRole('link', { name: 'Unsaved letter' }).click();
    await expect.poll(() => editorLines(page, 'html')).toEqual(original.split('\n'));
    await setEditorText(page, 'html', edited);
    await expect.poll(() => page.getByTestId('save-state').innerText()).toBe('Unsaved changes');
    const editorUrl = page.url();
    const dialog = page.getByRole('dialog', { name: 'Leave without saving?' });

    // Each way out asks; "Keep editing" stays, with the edits and the unsaved state.
    const ways: [string, () => Promise<unknown>][] = [
      [
        'the Assets tab',
        () => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Assets' }).click(),
      ],
      ['the back link', () => page.getByRole('link', { name: '← Templates' }).click()],
      ['the browser back button', () => page.goBack()],
      ['sign out', () => page.getByRole('button', { name: 'Sign out' }).click()],
    ];
    for (const [way, leave] of ways) {
      await leave();
      await dialog.waitFor();
      expect(await dialog.innerText(), way).toContain('“Unsaved letter” are not saved');
      if (way === 'the Assets tab') await screenshot(page, 'leave-unsaved');
      await dialog.getByRole('button', { name: 'Keep editing' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await expect.poll(() => page.url(), { message: way }).toBe(editorUrl);
      expect(await editorLines(page, 'html'), way).toEqual(edited.split('\n'));
      expect(await page.getByTestId('save-state').innerText(), way).toBe('Unsaved changes');
    }
    expect((await savedTemplate(template.id)).html).toBe(original);

    // "Save and leave": saved, then on the screen asked for.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Assets' }).click();
    await dialog.getByRole('button', { name: 'Save and leave' }).click();
    await page.waitForURL(/\/assets$/);
    expect((await savedTemplate(template.id)).html).toBe(edited);

    // Back in the editor with nothing unsaved, leaving does not ask.
    await page.goBack();
    await page.waitForURL(editorUrl);
    await expect.poll(() => editorLines(page, 'html')).toEqual(edited.split('\n'));
    expect(await page.getByTestId('save-state').innerText()).toBe('All changes saved');

    // "Discard changes": gone, and the template keeps what was saved.
    await setEditorText(page, 'html', '<p>Thrown away</p>');
    await page.getByRole('link', { name: '← Templates' }).click();
    await dialog.getByRole('button', { name: 'Discard changes' }).click();
    await page.waitForURL(/\/templates$/);
    expect((await savedTemplate(template.id)).html).toBe(edited);
    await page.getByRole('link', { name: 'Unsaved letter' }).click();
    await expect.poll(() => editorLines(page, 'html')).toEqual(edited.split('\n'));
    expect(await page.getByTestId('save-state').innerText()).toBe('All changes saved');
    // Leaving without edits: no question.
    await page.getByRole('link', { name: '← Templates' }).click();
    await page.waitForURL(/\/templates$/);
    expect(await dialog.count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it("marks a strict template's empty required field in the form and fails the preview as Run would; a refusal of Run is marked at the field and says nothing was charged", async () => {
    const template = await createTemplate({
      name: 'Strict letter',
      html: '<h1>Letter</h1>\n<p>Dear {{ customer.name }}</p>',
      sample_data: { customer: { name: 'Ada' } },
      strict: true,
    });
    // A version of it, whose verdict only the service can give (Run sends it; nothing is decided here).
    expect(
      (await t.request('POST', `/v1/templates/${template.id}/versions`, { apiKey: alice.apiKey, body: { tag: 'v1' } }))
        .status,
    ).toBe(200);
    const before = await credits();
    const ledger = await ledgerSize();
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey, `/templates/${template.id}`);
    const form = page.getByRole('form', { name: 'Template data' });
    const name = form.getByLabel('Customer name');
    const status = page.getByTestId('preview-status');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 60_000 }).toBe('ready');
    expect(await name.getAttribute('aria-invalid')).toBeNull();

    // Emptied: the form marks the field, the preview fails with the reason, Run says it will not generate.
    await name.fill('');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 60_000 }).toBe('error');
    expect(await page.getByTestId('preview-refusal').innerText()).toContain(
      'Customer name: required, and empty. Strict mode refuses the data',
    );
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    expect(await form.getByTestId('field-mark').innerText()).toContain(
      'Required: strict mode refuses the data without it.',
    );
    expect(await page.getByRole('tab', { name: /^Form/ }).innerText()).toContain('!');
    const run = page.getByRole('region', { name: 'Run', exact: true });
    expect(await run.getByTestId('run-required').innerText()).toContain('Not generated while Customer name is empty');
    expect(await run.getByRole('button', { name: 'Generate PDF' }).isDisabled()).toBe(true);
    await screenshot(page, 'required-refused');

    // Version 1 is the service's to judge: Run sends it, and the refusal is marked at the field.
    await run.getByLabel('Template', { exact: true }).selectOption('1');
    await run.getByRole('button', { name: 'Generate PDF' }).click();
    const refusal = run.getByTestId('run-error');
    await refusal.waitFor({ timeout: 60_000 });
    const text = await refusal.innerText();
    expect(text).toContain(`Not generated. Nothing was charged (balance: ${before} credits).`);
    expect(text).toContain('Customer name: required by the template, and empty');
    expect(text).not.toContain('data.customer.name');
    await expect
      .poll(() => form.getByTestId('field-mark').allInnerTexts())
      .toContainEqual(expect.stringContaining('Run refused it: required by the template, and empty'));
    expect(await credits()).toBe(before);
    expect(await ledgerSize()).toBe(ledger);

    // Another option: the refusal is for the run that was asked, and goes.
    await run.getByLabel('Background job').check();
    await expect.poll(() => refusal.count()).toBe(0);
    await expect
      .poll(() => form.getByTestId('field-mark').allInnerTexts())
      .not.toContainEqual(expect.stringContaining('Run refused it'));

    // Filled again: one verdict again, everywhere.
    await name.fill('Grace');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 60_000 }).toBe('ready');
    expect(await name.getAttribute('aria-invalid')).toBeNull();
    expect(await form.getByTestId('field-mark').count()).toBe(0);
    await run.getByLabel('Template', { exact: true }).selectOption('');
    expect(await run.getByTestId('run-required').count()).toBe(0);
    expect(await run.getByRole('button', { name: 'Generate PDF' }).isDisabled()).toBe(false);

    // Lenient (strict mode off in the draft): a warning at the field and beside the preview, no refusal.
    await name.fill('');
    await page.getByRole('tab', { name: 'Page setup' }).click();
    await page.getByRole('checkbox', { name: 'Strict mode' }).uncheck();
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 60_000 }).toBe('ready');
    expect(await page.getByTestId('preview-warnings').innerText()).toContain(
      'Customer name is required and has no value: printed as a blank.',
    );
    expect(await form.getByTestId('field-mark').innerText()).toContain('Required: left empty, it prints as a blank');
    expect(await name.getAttribute('aria-invalid')).toBeNull();
    expect(problems).toEqual([]);
  });

  it('marks an e-invoice finding at its field in the form, in the row the form numbers, and charges nothing', async () => {
    const template = await createTemplate({
      name: 'Invoice to check',
      html: EINVOICE_STARTER_HTML,
      css: EINVOICE_STARTER_CSS,
      sample_data: EINVOICE_STARTER_DATA,
      page: EINVOICE_STARTER_PAGE,
    });
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey, `/templates/${template.id}`);
    const form = page.getByRole('form', { name: 'Template data' });
    // The second line's unit code, as the form labels it (rows from 1), set to a code EN 16931 does not know.
    const unit = form.getByLabel('Unit code (Lines row 2)');
    expect(await unit.inputValue()).toBe('H87');
    await unit.fill('PCE');
    const run = page.getByRole('region', { name: 'Run', exact: true });
    await run.getByLabel('Attach an e-invoice (EN 16931)').check();
    expect(await run.getByLabel("The template's data").isChecked()).toBe(true);
    const before = await credits();
    const ledger = await ledgerSize();
    await run.getByRole('button', { name: 'Generate PDF' }).click();

    const findings = page.getByTestId('einvoice-findings');
    await findings.waitFor({ timeout: 60_000 });
    const finding = await findings.locator('[data-rule="BR-CL-23"]').innerText();
    expect(finding).toContain('Unit code (Lines row 2)');
    expect(finding).not.toContain('lines[1]');
    expect(await findings.innerText()).toContain(`Nothing was charged (balance: ${before} credits)`);
    // The field itself is marked, and nothing else in the form is.
    expect(await unit.getAttribute('aria-invalid')).toBe('true');
    const marks = form.getByTestId('field-mark');
    expect(await marks.count()).toBe(1);
    expect(await marks.innerText()).toContain('BR-CL-23');
    expect(await form.getByLabel('Unit code (Lines row 1)').getAttribute('aria-invalid')).toBeNull();
    // "Show in the form" brings focus to it.
    await findings.locator('[data-rule="BR-CL-23"]').getByRole('button', { name: 'Show in the form' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe(await unit.getAttribute('id'));
    await screenshot(page, 'einvoice-finding-marked');
    expect(await credits()).toBe(before);
    expect(await ledgerSize()).toBe(ledger);

    // Changed: the mark no longer describes the value, and goes.
    await unit.fill('H87');
    expect(await unit.getAttribute('aria-invalid')).toBeNull();
    expect(await marks.count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('previews an image template on a page of its canvas, in a frame of its shape, and a version of it too', async () => {
    const template = await createTemplate({
      name: 'Wide card',
      kind: 'image',
      canvas: { width: 400, height: 200 },
      html: STARTER_IMAGE_HTML,
      css: STARTER_IMAGE_CSS,
      sample_data: STARTER_IMAGE_DATA,
    });
    expect(
      (
        await t.request('POST', `/v1/templates/${template.id}/versions`, {
          apiKey: alice.apiKey,
          body: { tag: 'wide' },
        })
      ).status,
    ).toBe(200);
    const before = await credits();
    const { page, problems } = await studio();
    const previews = await capturePreviews(page);
    const first = previews.next();
    await signIn(page, alice.apiKey, `/templates/${template.id}`);
    // 400 × 200 CSS pixels is 300 × 150 pt: the page is the canvas, not A4.
    const wide = pageSize(await first);
    expectPoints(wide, 300, 150);
    await expect.poll(() => boxAspect(page, 'preview-box')).toBeCloseTo(2, 1);
    await page.waitForTimeout(500);
    await screenshot(page, 'image-preview');

    // A square canvas typed in the Canvas tab: the next preview, and its frame, are square.
    await page.getByRole('tab', { name: 'Canvas' }).click();
    const square = previews.next(60_000, (body) => (body.page as { height?: string } | undefined)?.height === '400px');
    await page.getByLabel('Canvas height (px)').fill('400');
    const squareSize = pageSize(await square);
    expectPoints(squareSize, 300, 300);
    await expect.poll(() => boxAspect(page, 'preview-box')).toBeCloseTo(1, 1);

    // The saved version, previewed by the service from its snapshot: its own canvas, still 400 × 200.
    const versionPreview = previews.next(60_000, (body) => body.version === 1);
    await page
      .getByRole('region', { name: 'Versions', exact: true })
      .getByRole('button', { name: 'Preview version 1' })
      .click();
    const versionSize = pageSize(await versionPreview);
    expectPoints(versionSize, 300, 150);
    expect(await credits()).toBe(before);
    expect(problems).toEqual([]);
  });
});
