/**
 * The studio for real documents (issue 13, part C), end to end: the real service in-process (SQLite),
 * the built studio, Debian's Chromium driven by playwright-core. What a new user ran into: a number
 * field that swallowed `1.234,56`, a footer error placed on the HTML pane, a save banner that stayed
 * after the fix, template ids instead of names, the phone navigation cut off; the asset screen; a
 * variable the sample data lacks, warned of beside the preview (an error in strict mode); and a
 * background job's warnings, shown once it completes as a sync run's are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { pdfInfo } from '../../support/documents/pdf-tools.js';
import { warmUpPatiently } from '../../support/documents/rendering-kit.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { solidPng } from '../../support/documents/png-images.js';
import {
  DESKTOP,
  PHONE,
  capturePreviews,
  editorLines,
  ensureStudioBuild,
  launchBrowser,
  layoutSettled,
  lintMarkerLines,
  openStudio,
  screenshot,
  setEditorText,
  signIn,
  type StudioPage,
} from './studio-browser.js';

// page.evaluate callbacks run in the browser; the test build has no DOM lib.
declare const window: { innerWidth: number };

describe('studio for real documents', { timeout: 180_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let alice: { accountId: string; apiKey: string };
  const open: StudioPage[] = [];

  const studio = async (viewport = DESKTOP) => {
    const s = await openStudio(browser, t.baseUrl, viewport);
    open.push(s);
    return s;
  };
  const createTemplate = async (body: Record<string, unknown>) => {
    const res = await t.request('POST', '/v1/templates', { apiKey: alice.apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; name: string };
  };
  const credits = async () => (await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).body.credits as number;

  beforeAll(async () => {
    ensureStudioBuild();
    t = await startTestApp('sqlite', { PRESSROOM_JOB_POLL_MS: '200' });
    t.services.startWorkers();
    alice = await t.createAccount({ credits: 20, email: 'alice@example.com', plan: 'pro' });
    // Patiently: on a loaded machine the first start of the service's Chromium can miss its own deadline.
    [browser] = await Promise.all([launchBrowser(), warmUpPatiently(t.services.renderer)]);
  });

  afterAll(async () => {
    for (const s of open) await s.context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  it('refuses a number field that holds no number, offers the reading of 1.234,56, and charges nothing meanwhile', async () => {
    const template = await createTemplate({
      name: 'Priced',
      html: '<p>Total {{ price * qty }}</p>',
      // The fields' own order, not the order of first use (price comes first in the HTML).
      fields: [
        { key: 'qty', label: 'Quantity', type: 'integer' },
        { key: 'price', label: 'Price', type: 'number' },
      ],
      sample_data: { qty: 2, price: 10 },
    });
    const before = await credits();
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey, `/templates/${template.id}`);
    const form = page.getByRole('form', { name: 'Template data' });
    await form.getByLabel('Quantity').waitFor();
    expect(await form.locator('input[type="text"]').evaluateAll((inputs) => inputs.map((i) => i.id))).toEqual([
      'data-qty',
      'data-price',
    ]);

    await form.getByLabel('Price').fill('1.234,56');
    await form.getByText('Not a number').waitFor();
    expect(await form.getByLabel('Price').getAttribute('aria-invalid')).toBe('true');
    const generate = page.getByRole('button', { name: 'Generate PDF' });
    expect(await generate.isDisabled()).toBe(true);
    await page.getByTestId('run-inputs-problem').waitFor();
    await expect.poll(() => page.getByTestId('preview-status').getAttribute('data-status')).toBe('paused');
    // The data still holds the last number, never NaN or nothing.
    await page.getByRole('tab', { name: 'JSON' }).click();
    expect(JSON.parse((await editorLines(page, 'sample-data')).join('\n'))).toEqual({ qty: 2, price: 10 });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    expect(await page.getByTestId('save-error').innerText()).toContain('Price: not a number');
    await screenshot(page, 'number-refused');

    await page.getByRole('tab', { name: 'Form' }).click();
    await form.getByRole('button', { name: 'Use 1234.56' }).click();
    expect(await form.getByLabel('Price').inputValue()).toBe('1234.56');
    expect(await generate.isDisabled()).toBe(false);
    await page.getByRole('tab', { name: 'JSON' }).click();
    expect(JSON.parse((await editorLines(page, 'sample-data')).join('\n'))).toEqual({ qty: 2, price: 1234.56 });
    expect(await credits()).toBe(before);
    expect(problems).toEqual([]);
  });

  it('puts a footer error on the footer pane, and clears the save banner once it is fixed', async () => {
    const template = await createTemplate({
      name: 'Footer trouble',
      html: '<h1>Report</h1>\n<p>{{ title }}</p>',
      sample_data: { title: 'Q3' },
      page: { footer_html: '<div>Page <span class="pageNumber"></span></div>' },
    });
    const { page, problems } = await studio();
    const previews = await capturePreviews(page);
    const first = previews.next();
    await signIn(page, alice.apiKey, `/templates/${template.id}`);
    await first;
    await expect.poll(() => page.getByTestId('preview-status').getAttribute('data-status')).toBe('ready');

    await page.getByRole('tab', { name: 'Footer' }).click();
    await setEditorText(
      page,
      'footer_html',
      '<div>Page <span class="pageNumber"></span></div>\n<div>{{ title | }}</div>',
    );
    // The preview's error is placed on the footer pane, at the footer's line, and not on the HTML.
    await expect
      .poll(() => page.getByTestId('preview-status').getAttribute('data-status'), { timeout: 60_000 })
      .toBe('error');
    await expect.poll(() => lintMarkerLines(page, 'footer_html')).toEqual([2]);
    expect(await page.getByRole('tab', { name: /Footer/ }).innerText()).toContain('!');
    expect(await page.getByRole('tab', { name: /HTML/ }).innerText()).not.toContain('!');

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('save-error').waitFor();
    expect(await page.getByTestId('save-error').innerText()).toContain('Not saved: one problem to fix.');
    expect(await page.getByTestId('save-error').innerText()).toContain('Footer, line 2');
    await screenshot(page, 'footer-error');

    // Fixed (not saved yet): the banner says so instead of asking for a fix that was made.
    await setEditorText(page, 'footer_html', '<div>Page <span class="pageNumber"></span> · {{ title }}</div>');
    await page.getByTestId('save-fixed').waitFor();
    expect(await page.getByTestId('save-error').count()).toBe(0);
    await expect.poll(() => lintMarkerLines(page, 'footer_html')).toEqual([]);

    // A custom paper size in page setup: saved as width/height, and the preview comes out at that size.
    await page.getByRole('tab', { name: 'Page setup' }).click();
    await page.getByLabel('Paper format').selectOption('custom');
    await page.getByLabel('Width').fill('100mm');
    // The field's own error in the page setup tab (the preview's "paused" notice may say the same, once it has run).
    await page
      .getByRole('tabpanel', { name: /Page setup/ })
      .getByText('page.width and page.height go together')
      .waitFor();
    const sized = previews.next(60_000, (body) => (body.page as { height?: string } | undefined)?.height === '150mm');
    await page.getByLabel('Height').fill('150mm');
    const size = /^([\d.]+) x ([\d.]+) pts/.exec(pdfInfo(await sized)['Page size'] ?? '');
    // 100 mm × 150 mm is 283.46 × 425.2 pt; Chromium rounds the paper to its own units (within 1.5 pt).
    expect(Math.abs(Number(size?.[1]) - 283.46)).toBeLessThanOrEqual(1.5);
    expect(Math.abs(Number(size?.[2]) - 425.2)).toBeLessThanOrEqual(1.5);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByTestId('save-state').innerText()).toBe('Saved');
    expect(await page.getByTestId('save-fixed').count()).toBe(0);
    const saved = (await t.request('GET', `/v1/templates/${template.id}`, { apiKey: alice.apiKey })).body;
    expect(saved.page).toMatchObject({
      width: '100mm',
      height: '150mm',
      footer_html: '<div>Page <span class="pageNumber"></span> · {{ title }}</div>',
    });
    expect(saved.page.format).toBeUndefined();
    expect(problems).toEqual([]);
  });

  it('warns of a variable the sample data lacks next to the preview; strict mode turns it into a problem at its line, and is saved', async () => {
    const template = await createTemplate({
      name: 'Strictly',
      html: '<h1>Letter</h1>\n<p>Dear {{ customer.name }}</p>',
      sample_data: { customer: {} },
    });
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey, `/templates/${template.id}`);
    const warnings = page.getByTestId('preview-warnings');
    // The required field the data lacks is known at once (the service's rule); what the preview met, once it is back.
    await expect
      .poll(() => warnings.innerText(), { timeout: 60_000 })
      .toContain('"customer.name" is not in the data (line 2, column 12)');
    expect(await warnings.innerText()).toContain('Customer name is required and has no value: printed as a blank.');

    await page.getByRole('tab', { name: 'Page setup' }).click();
    await page.getByRole('checkbox', { name: 'Strict mode' }).check();
    await expect
      .poll(() => page.getByTestId('preview-status').getAttribute('data-status'), { timeout: 60_000 })
      .toBe('error');
    await page.getByRole('tab', { name: /HTML/ }).click();
    await expect.poll(() => lintMarkerLines(page, 'html')).toEqual([2]);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByTestId('save-state').innerText()).toBe('Saved');
    expect((await t.request('GET', `/v1/templates/${template.id}`, { apiKey: alice.apiKey })).body.strict).toBe(true);
    await screenshot(page, 'strict-mode');
    expect(problems).toEqual([]);
  });

  it("shows a background job's warnings once it completes: a missing asset's ASSET_NOT_FOUND", async () => {
    const template = await createTemplate({
      name: 'Missing logo',
      html: `<p>Letterhead</p><img src="{{ asset('missing.png') }}">`,
    });
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey, `/templates/${template.id}`);
    const run = page.getByRole('region', { name: 'Run', exact: true });
    await run.getByLabel('Background job').check();
    await run.getByRole('button', { name: 'Generate PDF' }).click();
    await expect.poll(() => page.getByTestId('run-result').innerText(), { timeout: 90_000 }).toContain('completed');
    const warnings = page.getByTestId('run-warnings');
    expect(await warnings.innerText()).toContain('Generated with a warning:');
    expect(await warnings.innerText()).toContain('ASSET_NOT_FOUND');
    expect(await warnings.innerText()).toContain('"missing.png"');
    // The warning the studio shows is the job's own, as the API answers it.
    const jobId = await page.getByTestId('run-result').locator('code').first().innerText();
    const job = (await t.request('GET', `/v1/pdf/jobs/${jobId}`, { apiKey: alice.apiKey })).body;
    expect(job.warnings).toEqual([
      expect.objectContaining({ code: 'ASSET_NOT_FOUND', url: 'https://assets.pressroom.internal/a/missing.png' }),
    ]);
    expect(problems).toEqual([]);
  });

  it('shows template names on the jobs and transactions screens, and wraps the phone navigation', async () => {
    const template = await createTemplate({ name: 'Named in lists', html: '<p>{{ a }}</p>', sample_data: { a: 'x' } });
    const job = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: alice.apiKey,
      body: { template_id: template.id, data: { a: 'x' } },
    });
    expect([200, 201, 202], JSON.stringify(job.body)).toContain(job.status);
    const { page } = await studio(PHONE);
    await signIn(page, alice.apiKey, '/jobs');
    const jobRow = page.locator('tbody tr', { hasText: 'Named in lists' });
    await jobRow.waitFor();
    expect(await jobRow.getByRole('link', { name: 'Named in lists' }).getAttribute('title')).toBe(
      `Template id ${template.id}`,
    );
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Transactions', exact: true })
      .click();
    await page.locator('tbody tr', { hasText: 'Named in lists' }).first().waitFor();

    // Every navigation link is inside the phone's width, none scrolled out of sight.
    await layoutSettled(page);
    const links = page.getByRole('navigation', { name: 'Main' }).getByRole('link');
    expect(await links.count()).toBe(10); // Batches joined the eight (issue 40), Validate e-invoice the nine (issue 41)
    const width = await page.evaluate(() => window.innerWidth);
    for (const box of await links.evaluateAll((all) =>
      all.map((a) => a.getBoundingClientRect()).map((r) => ({ left: r.left, right: r.right })),
    )) {
      expect(box.left).toBeGreaterThanOrEqual(0);
      expect(box.right).toBeLessThanOrEqual(width);
    }
    await screenshot(page, 'phone-navigation');
  });

  it('uploads an image on the asset screen and shows its thumbnail and snippet', async (ctx) => {
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey, '/templates');
    await page.getByRole('link', { name: 'Assets', exact: true }).click();
    await page.getByRole('heading', { name: 'Assets' }).waitFor();
    if ((await t.request('GET', '/v1/assets', { apiKey: alice.apiKey })).status === 404) {
      // A server without the asset API (it lands separately, issue 13 part A): the screen says so.
      await page.getByText('This server has no asset library').waitFor();
      ctx.skip();
      return;
    }
    const png = solidPng(40, 20, 128);
    await page.locator('#asset-files').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: png });
    await page.getByTestId('upload-result').getByText('Uploaded logo.png as logo.png.').waitFor();
    // A success reads as one (issue 50 point 11: it was a red error box in MIME jargon).
    expect(await page.getByTestId('upload-result').getAttribute('class')).toContain('notice-success');
    expect(await page.getByTestId('upload-result').innerText()).not.toMatch(/image\/|mime|content.type/i);
    const card = page.locator('[data-asset-name="logo.png"]');
    expect(await card.innerText()).toContain('PNG image');
    expect(await card.innerText()).not.toContain('image/png');
    expect(await card.getByTestId('asset-snippet').innerText()).toBe("{{ asset('logo.png') }}");
    const thumbnail = card.getByRole('img', { name: 'Thumbnail of logo.png' });
    await expect
      .poll(() => thumbnail.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(40);
    const listed = (await t.request('GET', '/v1/assets', { apiKey: alice.apiKey })).body.assets as {
      name: string;
      content_type: string;
    }[];
    expect(listed).toContainEqual(expect.objectContaining({ name: 'logo.png', content_type: 'image/png' }));
    await screenshot(page, 'assets');

    await card.getByRole('button', { name: 'Delete logo.png' }).click();
    await page.getByRole('dialog', { name: 'Delete asset?' }).getByRole('button', { name: 'Delete asset' }).click();
    await expect.poll(() => card.count()).toBe(0);
    expect((await t.request('GET', '/v1/assets', { apiKey: alice.apiKey })).body.assets).toEqual([]);
    expect(problems).toEqual([]);
  });
});
