/**
 * Free previews stay previews: `POST /v1/templates/preview` over real HTTP, real Chromium. Whatever
 * the template's header, footer and body do to hide a watermark, every page of the preview carries
 * the PREVIEW stamp, as text (pdftotext, page by page) and as red pixels (pdftoppm; the stamp is
 * the only red on these pages). A paid
 * generation of the same document carries none, and previews cost nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { pdfPages, pdfPageText, redPixelShare } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

/** Ways a template could hide a watermark drawn by Chromium: each goes into the header, the footer and the body. */
const HIDING_TRICKS: { name: string; css: string; html?: string }[] = [
  { name: 'html{display:none}', css: 'html { display: none !important }' },
  { name: 'body{opacity:0}', css: 'html, body { opacity: 0 !important }' },
  { name: 'clip-path', css: 'html, body, * { clip-path: inset(50%) !important }' },
  { name: 'transform:scale(0)', css: '*, *::before, *::after { transform: scale(0) !important }' },
  { name: 'visibility:hidden', css: 'html, body, * { visibility: hidden !important }' },
  {
    name: 'a full-page white cover with a huge z-index',
    css: '.cover { position: fixed; inset: 0; width: 100vw; height: 100vh; background: #fff; z-index: 2147483647 }',
    html: '<div class="cover"></div>',
  },
];
const ALL_AT_ONCE = {
  name: 'every trick at once',
  css: HIDING_TRICKS.map((t) => t.css).join('\n'),
  html: HIDING_TRICKS.map((t) => t.html ?? '').join(''),
};

const THREE_PAGES = [1, 2, 3]
  .map((n) => `<section style="break-after: ${n < 3 ? 'page' : 'auto'}">Body of page ${n} for {{ who }}</section>`)
  .join('');

/** A preview body whose header, footer and main document all carry the trick. */
function previewBody(trick: { css: string; html?: string }): Record<string, unknown> {
  const part = (label: string) =>
    `<style>${trick.css}</style>${trick.html ?? ''}<div style="font-size: 10px">${label}</div>`;
  return {
    html: `${trick.html ?? ''}${THREE_PAGES}`,
    css: trick.css,
    page: { format: 'A4', header_html: part('Running header'), footer_html: part('Running footer') },
    data: { who: 'Grace' },
  };
}

/** Checks every page of a preview for the stamp, as text and as red pixels. */
function expectStampedEveryPage(pdf: Buffer): number {
  const pages = pdfPages(pdf);
  expect(pages).toBeGreaterThanOrEqual(1);
  for (let page = 1; page <= pages; page++) {
    expect(pdfPageText(pdf, page), `page ${page} text`).toContain('PREVIEW');
    expect(redPixelShare(pdf, page), `share of red pixels on page ${page}`).toBeGreaterThan(0.01);
  }
  return pages;
}

describe.each(DOCUMENT_DIALECTS)('preview stamp on %s', (dialect) => {
  let t: TestApp;
  let account: { accountId: string; apiKey: string };
  const balance = async () =>
    (await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits as number;
  const preview = (body: Record<string, unknown>) =>
    t.request('POST', '/v1/templates/preview', { apiKey: account.apiKey, body });

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_RENDER_CONCURRENCY: '2', PRESSROOM_PREVIEW_PER_MINUTE: '100' });
    account = await t.createAccount({ credits: 5, plan: 'enterprise' });
  });
  afterAll(async () => t?.close());

  it.each([...HIDING_TRICKS, ALL_AT_ONCE])(
    'stamps every page although header, footer and body try $name',
    async (trick) => {
      const res = await preview(previewBody(trick));
      expect(res.status, res.bytes.toString('utf8', 0, 300)).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      const pages = expectStampedEveryPage(res.bytes);
      // Tricks that leave the layout alone keep the three pages; display:none empties the document.
      if (!trick.css.includes('display: none')) expect(pages).toBe(3);
    },
  );

  it('stamps a plain three-page preview on every page and charges nothing; a paid generation has no stamp', async () => {
    const before = await balance();
    const transactions = async () =>
      (await t.request('GET', '/v1/account/transactions', { apiKey: account.apiKey })).body.transactions as unknown[];
    const historyBefore = await transactions();
    const plain = {
      html: THREE_PAGES,
      page: { format: 'A4', header_html: '<div style="font-size: 10px">Running header</div>' },
      data: { who: 'Grace' },
    };
    const res = await preview(plain);
    expect(res.status).toBe(200);
    expect(expectStampedEveryPage(res.bytes)).toBe(3);
    for (const page of [1, 2, 3]) expect(pdfPageText(res.bytes, page)).toContain(`Body of page ${page} for Grace`);
    expect(await balance()).toBe(before);
    expect(await transactions()).toEqual(historyBefore);

    const saved = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: { name: 'Three pages', html: plain.html, page: plain.page },
    });
    expect(saved.status).toBe(201);
    const paid = await t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      body: { template_id: saved.body.id, export_type: 'binary', data: plain.data },
    });
    expect(paid.status).toBe(200);
    expect(pdfPages(paid.bytes)).toBe(3);
    for (const page of [1, 2, 3]) {
      const text = pdfPageText(paid.bytes, page);
      expect(text).toContain(`Body of page ${page} for Grace`);
      expect(text).not.toContain('PREVIEW');
      expect(redPixelShare(paid.bytes, page)).toBe(0);
    }
    expect(await balance()).toBe(before - 1);
  });
});
