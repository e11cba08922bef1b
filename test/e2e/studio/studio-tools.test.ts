/**
 * The studio's PDF tools and image screens end to end: the real service in-process (SQLite), the built
 * web app, Debian's Chromium driven by playwright-core. Asserts what a user gets: the downloaded PDFs
 * (pdfinfo, pdftotext), the rendered images (format and pixel size from the header, pixels), the
 * coded refusals on screen, and the credits.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Download, Page } from 'playwright-core';
import { PDFDocument, StandardFonts, degrees } from '@cantoo/pdf-lib';
import { countPixels, decodePng, imageInfo } from '../../support/documents/image-tools.js';
import { pdfInfo, pdfPageText, pdfPages } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ensureStudioBuild, launchBrowser, openStudio, screenshot, signIn, type StudioPage } from './studio-browser.js';

/** A small PDF whose pages read "<name> page N". */
async function makePdf(name: string, pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) {
    const page = doc.addPage([300, 200]);
    page.setRotation(degrees(0));
    page.drawText(`${name} page ${i}`, { x: 20, y: 100, size: 18, font });
  }
  return Buffer.from(await doc.save());
}

const pdfFile = (name: string, buffer: Buffer) => ({ name, mimeType: 'application/pdf', buffer });

/** Runs `action` and returns the bytes of the download it starts. */
async function downloaded(page: Page, action: () => Promise<unknown>): Promise<Buffer> {
  const [download] = (await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), action()])) as [
    Download,
    unknown,
  ];
  return readFile((await download.path())!);
}

const isRed = ([r, g, b]: number[]) => r! > 200 && g! < 80 && b! < 80;

// Generous timeouts: the machine's two cores are shared with other Chromium work.
describe('studio PDF tools and images in Chromium', { timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let alice: { accountId: string; apiKey: string };
  const open: StudioPage[] = [];

  const studio = async () => {
    const s = await openStudio(browser, t.baseUrl);
    open.push(s);
    return s;
  };
  const credits = async () => (await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).body.credits as number;
  const transactions = async () =>
    (await t.request('GET', '/v1/account/transactions?limit=1000', { apiKey: alice.apiKey })).body.transactions as {
      transaction_type: string;
      template_id: string | null;
    }[];

  beforeAll(async () => {
    ensureStudioBuild();
    t = await startTestApp('sqlite');
    alice = await t.createAccount({ credits: 20, email: 'alice@example.com', plan: 'pro' });
    [browser] = await Promise.all([launchBrowser(), t.services.renderer.warmUp()]);
  });

  afterAll(async () => {
    for (const s of open) await s.context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  it('merges picked PDFs in the order listed, extracts and rotates pages, and shows a refusal with its code, charging nothing for it', async () => {
    const alpha = await makePdf('Alpha', 2);
    const beta = await makePdf('Beta', 1);
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey);
    await page.getByRole('link', { name: 'PDF tools' }).click();
    await page.waitForURL(/\/tools\/pdf$/);
    const before = await credits();

    // Merge: both files picked, then Beta moved first.
    await page.getByLabel('Add PDFs').setInputFiles([pdfFile('alpha.pdf', alpha), pdfFile('beta.pdf', beta)]);
    await page.getByRole('button', { name: 'Move beta.pdf up' }).click();
    // No file name typed: the result is named after the first file.
    expect(await page.getByLabel('File name (optional, without .pdf)').getAttribute('placeholder')).toBe('beta-merged');
    await page.getByLabel('File name (optional, without .pdf)').fill('bundle');
    await screenshot(page, 'pdf-tools');
    const merged = await downloaded(page, () => page.getByRole('button', { name: 'Merge (1 credit)' }).click());
    expect(pdfPages(merged)).toBe(3);
    expect([1, 2, 3].map((n) => pdfPageText(merged, n).trim())).toEqual([
      'Beta page 1',
      'Alpha page 1',
      'Alpha page 2',
    ]);
    await expect.poll(() => page.getByTestId('tool-result-link').innerText()).toBe('bundle.pdf');

    // Extract pages 2, 1 of Alpha: in that order.
    await page.getByRole('tab', { name: 'Extract pages' }).click();
    await page.getByLabel('PDF', { exact: true }).setInputFiles([pdfFile('alpha.pdf', alpha)]);
    await page.getByLabel('Pages', { exact: true }).fill('2, 1');
    const extracted = await downloaded(page, () =>
      page.getByRole('button', { name: 'Extract pages (1 credit)' }).click(),
    );
    expect([1, 2].map((n) => pdfPageText(extracted, n).trim())).toEqual(['Alpha page 2', 'Alpha page 1']);

    // Rotate every page of Alpha by 90°.
    await page.getByRole('tab', { name: 'Rotate' }).click();
    await page.getByLabel('PDF', { exact: true }).setInputFiles([pdfFile('alpha.pdf', alpha)]);
    await page.getByLabel('Angle (clockwise)').selectOption('90');
    const rotated = await downloaded(page, () => page.getByRole('button', { name: 'Rotate (1 credit)' }).click());
    expect(pdfInfo(rotated, ['-f', '1', '-l', '2'])).toMatchObject({
      [`Page ${'1'.padStart(4)} rot`]: '90',
      [`Page ${'2'.padStart(4)} rot`]: '90',
    });
    expect(await credits()).toBe(before - 3);
    const ledger = (await transactions()).length;

    // Refusals: a page past the end, and a file that is not a PDF. The code shows; nothing is charged.
    await page.getByRole('tab', { name: 'Extract pages' }).click();
    await page.getByLabel('PDF', { exact: true }).setInputFiles([pdfFile('beta.pdf', beta)]);
    await page.getByLabel('Pages', { exact: true }).fill('1, 9');
    await page.getByRole('button', { name: 'Extract pages (1 credit)' }).click();
    await expect
      .poll(() => page.getByTestId('tool-error').innerText())
      .toContain('Pages: page 9 is outside the document, which has 1 page (page_out_of_range)');
    expect(await page.getByTestId('tool-error').innerText()).toContain('Nothing was charged');
    await page.getByRole('tab', { name: 'Rotate' }).click();
    await page
      .getByLabel('PDF', { exact: true })
      .setInputFiles([
        { name: 'notes.pdf', mimeType: 'application/pdf', buffer: Buffer.from('these are notes, not a PDF') },
      ]);
    await page.getByRole('button', { name: 'Rotate (1 credit)' }).click();
    await expect.poll(() => page.getByTestId('tool-error').innerText()).toContain('The file (notes.pdf): ');
    expect(await page.getByTestId('tool-error').innerText()).toContain('(pdf_invalid)');
    expect(await credits()).toBe(before - 3);
    expect((await transactions()).length).toBe(ledger);
    expect(problems).toEqual([]);
  });

  it('creates an image template with a canvas, filters the list by kind, edits the canvas, and renders images with layer modifications', async () => {
    await t.request('POST', '/v1/templates', {
      apiKey: alice.apiKey,
      body: { name: 'Plain invoice', html: '<p>Invoice</p>' },
    });
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey);

    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByLabel('Template name').fill('Social card');
    await page.getByLabel('Image', { exact: true }).check();
    await page.getByLabel('Canvas width (px)').fill('400');
    await page.getByLabel('Canvas height (px)').fill('200');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/\/templates\/[A-Za-z0-9_-]{12}$/);
    const id = page.url().split('/').pop()!;
    expect((await t.request('GET', `/v1/templates/${id}`, { apiKey: alice.apiKey })).body).toMatchObject({
      kind: 'image',
      canvas: { width: 400, height: 200 },
      page: null,
    });

    // An image template has a canvas instead of a header, footer and paper; saving it keeps it an image.
    expect(await page.getByRole('tab', { name: 'Header' }).count()).toBe(0);
    await page.getByRole('tab', { name: 'Canvas' }).click();
    await page.getByLabel('Canvas height (px)').fill('250');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByTestId('save-state').innerText()).toBe('Saved');
    expect((await t.request('GET', `/v1/templates/${id}`, { apiKey: alice.apiKey })).body).toMatchObject({
      kind: 'image',
      canvas: { width: 400, height: 250 },
    });

    // The layers of the starter card, with the reserved background.
    const layers = page.getByTestId('layers');
    await expect
      .poll(async () => (await layers.locator('tbody th code').allInnerTexts()).sort())
      .toEqual(['background', 'card', 'headline', 'subtitle']);

    // Each render's link carries its number, so a click never takes the previous image.
    const resultLink = (n: number) => page.locator(`[data-testid="image-result-link"][data-render="${n}"]`);

    // Unmodified, PNG at 300 px wide: the height follows the canvas (250/400).
    const before = await credits();
    await page.getByLabel('Width (px)', { exact: true }).fill('300');
    await page.getByRole('button', { name: 'Render image' }).click();
    const plainBytes = await downloaded(page, () => resultLink(1).click());
    expect(imageInfo(plainBytes)).toMatchObject({ format: 'png', width: 300 });
    expect(Math.abs(imageInfo(plainBytes).height - 187.5)).toBeLessThanOrEqual(0.5);
    await expect.poll(() => page.getByTestId('image-result').innerText()).toMatch(/300 × 18[78] px/);
    const plain = decodePng(plainBytes);
    expect(countPixels(plain, isRed)).toBe(0);

    // The headline's text and colour modified, the subtitle hidden: red text appears.
    await page.getByLabel('Text of headline').fill('WWW');
    await page.getByLabel('Colour of headline').fill('#ff0000');
    await page.getByLabel('Hide subtitle').check();
    await page.getByRole('button', { name: 'Render image' }).click();
    const modifiedBytes = await downloaded(page, () => resultLink(2).click());
    expect(await page.getByTestId('image-result').innerText()).toContain('from the draft');
    const modified = decodePng(modifiedBytes);
    expect(modified.width).toBe(300);
    expect(countPixels(modified, isRed)).toBeGreaterThan(200);
    await screenshot(page, 'image-render', { fullPage: true });

    // JPEG at 200 px with a quality.
    await page.getByLabel('Format', { exact: true }).selectOption('jpeg');
    await page.getByLabel('Width (px)', { exact: true }).fill('200');
    await page.getByLabel('Quality', { exact: true }).fill('60');
    await page.getByRole('button', { name: 'Render image' }).click();
    const jpeg = await downloaded(page, () => resultLink(3).click());
    // Named after the template when no file name is typed.
    expect(await resultLink(3).innerText()).toBe('Social-card.jpg');
    expect(imageInfo(jpeg)).toMatchObject({ format: 'jpeg', width: 200 });
    expect(await credits()).toBe(before - 3);
    const imageCharges = (await transactions()).filter((tx) => tx.template_id === id);
    expect(imageCharges.map((tx) => tx.transaction_type)).toEqual(['PDFGEN', 'PDFGEN', 'PDFGEN']);

    // The list, filtered by kind through the API's ?kind=.
    await page.getByRole('link', { name: 'Templates', exact: true }).click();
    await page.getByRole('link', { name: 'Social card' }).waitFor();
    await page.getByLabel('Kind', { exact: true }).selectOption('image');
    await expect.poll(() => page.getByRole('link', { name: 'Plain invoice' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Social card' }).count()).toBe(1);
    await page.getByLabel('Kind', { exact: true }).selectOption('pdf');
    await page.getByRole('link', { name: 'Plain invoice' }).waitFor();
    expect(await page.getByRole('link', { name: 'Social card' }).count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
