/**
 * The PDF/UA checker's findings in the studio, at the element that caused them: the real service
 * in-process (SQLite), the built studio in Debian's Chromium. A Run with PDF/UA on that the service
 * refuses lists each finding in the HTML pane's problems and marks its line in the editor — the image
 * without alt text found before printing (the page survey), the skipped heading level found in the
 * printed file (the PDF check) — while Run still says it was not generated and nothing was charged.
 * The 422 items carry the element in `ctx`, which is what the studio places them by.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { warmUpPatiently } from '../../support/documents/rendering-kit.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import {
  DESKTOP,
  PHONE,
  editorLines,
  ensureStudioBuild,
  hasNoHorizontalOverflow,
  launchBrowser,
  layoutSettled,
  lintMarkerLines,
  openStudio,
  screenshot,
  setEditorText,
  signIn,
  type StudioPage,
} from './studio-browser.js';

const DOT =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A letter whose image (line 4) has no alt text, and whose headings skip level 2 (line 6). */
const LETTER = [
  '<!doctype html>',
  '<html lang="en">',
  '<head><title>Letter</title></head>',
  `<body><img src="${DOT}" width="40" height="40">`,
  '<h1>Letter to {{ name }}</h1>',
  '<h3>Terms</h3>',
  '<p>Dear {{ name }}, thank you.</p>',
  '</body>',
  '</html>',
].join('\n');

describe('studio: PDF/UA findings at their elements', { timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let alice: { accountId: string; apiKey: string };
  const open: StudioPage[] = [];

  const credits = async () => (await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).body.credits as number;
  const createTemplate = async (body: Record<string, unknown>) => {
    const res = await t.request('POST', '/v1/templates', { apiKey: alice.apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; name: string };
  };

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

  it('names the element of each finding in the 422 (ctx), before printing and after', async () => {
    const create = (templateId: string) =>
      t.request('POST', '/v1/pdf/create', {
        apiKey: alice.apiKey,
        body: { template_id: templateId, data: { name: 'Ada' }, pdf_ua: true },
      });
    const before = await credits();
    const survey = await createTemplate({ name: 'Survey', html: '<p><img src="logo.png?a=1&amp;b=2"></p>' });
    const refused = await create(survey.id);
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([
      expect.objectContaining({ type: 'value_error.pdf_ua.11-001', ctx: { element: 'html' } }),
      expect.objectContaining({ type: 'value_error.pdf_ua.06-003', ctx: { element: 'title' } }),
      // The src attribute as the page has it (entities decoded), for a program to find the tag by.
      expect.objectContaining({ type: 'value_error.pdf_ua.13-004', ctx: { element: 'img', src: 'logo.png?a=1&b=2' } }),
    ]);
    const headings = await createTemplate({
      name: 'Headings',
      html: '<!doctype html><html lang="en"><head><title>T</title></head><body><h1>A</h1><h3>B</h3></body></html>',
    });
    const checked = await create(headings.id);
    expect(checked.status).toBe(422);
    expect(checked.body.detail).toEqual([
      {
        loc: ['body', 'pdf_ua'],
        msg: 'Heading H3 follows H1: level 2 is skipped. PDF/UA forbids it (Matterhorn checkpoint 14-003).',
        type: 'value_error.pdf_ua.14-003',
        ctx: { element: 'h3' },
      },
    ]);
    expect(await credits()).toBe(before);
  });

  it("lists Run's PDF/UA findings in the HTML pane's problems, marked at their lines, and charges nothing", async () => {
    const template = await createTemplate({ name: 'Accessible letter', html: LETTER, sample_data: { name: 'Ada' } });
    const before = await credits();
    const s = await openStudio(browser, t.baseUrl);
    open.push(s);
    const { page, problems } = s;
    await signIn(page, alice.apiKey, `/templates/${template.id}`);
    await expect.poll(() => editorLines(page, 'html')).toEqual(LETTER.split('\n'));
    const status = page.getByTestId('preview-status');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 60_000 }).toBe('ready');

    // PDF/UA on in Run: refused before printing, for the image on line 4.
    const run = page.getByRole('region', { name: 'Run', exact: true });
    await run.getByTestId('run-pdf-ua').check();
    await run.getByRole('button', { name: 'Generate PDF' }).click();
    const refusal = run.getByTestId('run-error');
    await refusal.waitFor({ timeout: 60_000 });
    expect(await refusal.innerText()).toContain(`Not generated. Nothing was charged (balance: ${before} credits).`);
    expect(await refusal.innerText()).toContain('has no alternative text');
    const listed = page.locator('#problems-html li');
    await expect
      .poll(() => listed.allInnerTexts())
      .toEqual([
        'HTML, line 4: This image has no alternative text: give it alt="…" saying what it shows, or alt="" if it is only decoration. PDF/UA needs it (Matterhorn checkpoint 13-004).',
      ]);
    expect(await listed.first().getAttribute('data-line')).toBe('4');
    await expect.poll(() => lintMarkerLines(page, 'html')).toEqual([4]);
    expect(await page.getByRole('tab', { name: /HTML/ }).innerText()).toContain('!');
    expect(await credits()).toBe(before);

    // The list entry fits, at a desktop's width and a phone's.
    await layoutSettled(page);
    const box = await listed.first().boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(DESKTOP.width);
    await listed.first().scrollIntoViewIfNeeded();
    await screenshot(page, 'pdf-ua-problems');
    await page.setViewportSize(PHONE);
    await layoutSettled(page);
    expect(await hasNoHorizontalOverflow(page)).toMatchObject({ ok: true });
    const phoneBox = await listed.first().boundingBox();
    expect(phoneBox!.x + phoneBox!.width).toBeLessThanOrEqual(PHONE.width);
    await listed.first().scrollIntoViewIfNeeded();
    await screenshot(page, 'phone-pdf-ua-problems');
    await page.setViewportSize(DESKTOP);

    // Given its alt text, the finding is for a text that is no more: it goes from the list and the gutter.
    await setEditorText(page, 'html', LETTER.replace('<img src=', '<img alt="Company logo" src='));
    await expect.poll(() => listed.count()).toBe(0);
    await expect.poll(() => lintMarkerLines(page, 'html')).toEqual([]);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByTestId('save-state').innerText()).toBe('Saved');

    // Run again: printed, then refused by the PDF check, for the heading that skips a level on line 6.
    await run.getByRole('button', { name: 'Generate PDF' }).click();
    await expect
      .poll(() => listed.allInnerTexts(), { timeout: 60_000 })
      .toEqual([
        'HTML, line 6: Heading H3 follows H1: level 2 is skipped. PDF/UA forbids it (Matterhorn checkpoint 14-003).',
      ]);
    await expect.poll(() => lintMarkerLines(page, 'html')).toEqual([6]);
    expect(await refusal.innerText()).toContain('Heading H3 follows H1');

    // PDF/UA off again: the refusal was for that run, and goes with its findings.
    await run.getByTestId('run-pdf-ua').uncheck();
    await expect.poll(() => refusal.count()).toBe(0);
    await expect.poll(() => listed.count()).toBe(0);
    expect(await credits()).toBe(before);
    expect(problems).toEqual([]);
  });
});
