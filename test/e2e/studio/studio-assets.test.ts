/**
 * The studio's asset screen with frozen versions (issue 50), end to end: the real service in-process
 * (SQLite), the built studio, Debian's Chromium driven by playwright-core. Each asset says where it
 * is used (drafts, and which revision each published version prints); uploading a file under a name
 * the account has asks first ("logo.svg is used by 3 templates": Replace / Cancel), and a replaced
 * logo changes the draft, not the published version; a name a version prints is not offered for
 * deletion; the screen fits a phone's width.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { warmUpPatiently } from '../../support/documents/rendering-kit.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import {
  DESKTOP,
  PHONE,
  ensureStudioBuild,
  hasNoHorizontalOverflow,
  launchBrowser,
  layoutSettled,
  openStudio,
  screenshot,
  signIn,
  type StudioPage,
} from './studio-browser.js';

const logo = (word: string) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="40"><text x="4" y="28" font-family="sans-serif" font-size="24">${word}</text></svg>`,
  );

describe('studio assets with frozen versions', { timeout: 180_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let alice: { accountId: string; apiKey: string };
  let branded: string;
  const open: StudioPage[] = [];

  const studio = async (viewport = DESKTOP) => {
    const s = await openStudio(browser, t.baseUrl, viewport);
    open.push(s);
    return s;
  };
  const api = (method: string, path: string, body?: unknown) => t.request(method, path, { apiKey: alice.apiKey, body });
  const versionText = async () =>
    pdfText(
      (await api('POST', '/v1/pdf/create', { template_id: branded, version: 'v1', data: {}, export_type: 'binary' }))
        .bytes,
    );

  beforeAll(async () => {
    ensureStudioBuild();
    t = await startTestApp('sqlite', {});
    alice = await t.createAccount({ credits: 20, plan: 'enterprise' });
    [browser] = await Promise.all([launchBrowser(), warmUpPatiently(t.services.renderer)]);
    expect(
      (await api('POST', '/v1/assets', { name: 'logo.svg', content_base64: logo('ALPHA').toString('base64') })).status,
    ).toBe(201);
    for (const name of ['Branded', 'Letter', 'Footer']) {
      const res = await api('POST', '/v1/templates', {
        name,
        html: `<p>${name}</p><img src="{{ asset('logo.svg') }}" width="300" height="40">`,
      });
      if (name === 'Branded') branded = res.body.id;
    }
    expect((await api('POST', `/v1/templates/${branded}/versions`, { tag: 'v1' })).status).toBe(200);
  });

  afterAll(async () => {
    for (const s of open) await s.context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  it('shows where a name is used, asks before replacing it, and the published version keeps its logo', async () => {
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey, '/assets');
    const card = page.locator('[data-asset-name="logo.svg"]');
    const usedBy = card.getByTestId('asset-used-by');
    await usedBy.waitFor();
    expect((await usedBy.locator('li').allInnerTexts()).map((line) => line.trim())).toEqual([
      'Branded: draft, v1 prints revision 1',
      'Footer: draft',
      'Letter: draft',
    ]);
    expect(await usedBy.getByRole('link', { name: 'Branded' }).getAttribute('href')).toBe(`/templates/${branded}`);

    // Cancel keeps the current file.
    const file = { name: 'logo.svg', mimeType: 'image/svg+xml', buffer: logo('BRAVO') };
    await page.locator('#asset-files').setInputFiles(file);
    const dialog = page.getByRole('dialog', { name: 'Replace logo.svg?' });
    await dialog.waitFor();
    expect(await dialog.getByText(/logo\.svg is used by 3 templates \(Branded, Footer, Letter\)/).count()).toBe(1);
    await screenshot(page, 'assets-replace-question');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page
      .getByTestId('upload-result')
      .getByText('logo.svg was not uploaded: you kept the current logo.svg.')
      .waitFor();
    expect((await api('GET', '/v1/assets')).body.assets[0]).toMatchObject({ name: 'logo.svg', revision: 1 });

    // Replace: the draft prints the new file, the version the old one.
    await page.locator('#asset-files').setInputFiles(file);
    await dialog.getByRole('button', { name: 'Replace' }).click();
    await page.getByTestId('upload-result').getByText('Uploaded logo.svg: it replaces logo.svg in drafts.').waitFor();
    await card.getByText('revision 2').waitFor();
    const thumbnail = card.getByRole('img', { name: 'Thumbnail of logo.svg' });
    await expect
      .poll(() => thumbnail.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(300);
    expect(await versionText()).toContain('ALPHA');
    expect(
      pdfText((await api('POST', '/v1/pdf/create', { template_id: branded, data: {}, export_type: 'binary' })).bytes),
    ).toContain('BRAVO');

    // A name a published version prints is not offered for deletion: the dialog says which version and what to do.
    await card.getByRole('button', { name: 'Delete logo.svg' }).click();
    const inUse = page.getByRole('dialog', { name: 'logo.svg is in use' });
    await inUse.getByText(/Published versions print it: Branded v1\. .*delete those versions first/).waitFor();
    await inUse.getByRole('button', { name: 'Close' }).click();
    expect((await api('GET', '/v1/assets')).body.assets).toHaveLength(1);
    expect(problems).toEqual([]);
  });

  it('lays the used-by lists out at phone width without sideways scrolling', async () => {
    const { page, problems } = await studio(PHONE);
    await signIn(page, alice.apiKey, '/assets');
    await page.locator('[data-asset-name="logo.svg"]').getByTestId('asset-used-by').waitFor();
    await layoutSettled(page);
    const overflow = await hasNoHorizontalOverflow(page);
    expect(overflow.ok, JSON.stringify(overflow)).toBe(true);
    await screenshot(page, 'phone-assets-used-by');
    expect(problems).toEqual([]);
  });

  it('says in the Versions panel that a version keeps its asset files', async () => {
    const { page } = await studio();
    await signIn(page, alice.apiKey, `/templates/${branded}`);
    await page
      .locator('#versions-section')
      .getByText('with the asset files it uses as they were when it was published')
      .waitFor();
  });
});
