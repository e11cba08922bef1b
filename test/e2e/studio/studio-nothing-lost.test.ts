/**
 * Issue 50's studio points, end to end: the real service in-process (SQLite, no rules pack, no
 * time-stamp authority of its own), the built studio and Debian's Chromium driven by playwright-core.
 * - unsaved editor work, a syntax error included, survives a closed tab and is offered back
 *   (Restore / Discard), per account and template, and goes once saved or discarded;
 * - what this installation cannot do is said before the user acts (Validate e-invoice, time-stamps);
 * - a refund names what it gives back, and Transactions filter by type and batch; Jobs says it lists
 *   background jobs; Run calls the draft by one name;
 * - "New template" has a blank start; the form follows the HTML as it is typed, and sample keys no
 *   field uses leave the data and the snippets.
 * Each screen is also laid out at phone width without sideways scrolling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import {
  DESKTOP,
  PHONE,
  editorLines,
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

// page.evaluate callbacks run in the browser; the test build has no DOM lib.
declare const localStorage: { length: number; key(i: number): string | null; getItem(key: string): string | null };

const LETTER = '<h1>Letter to {{ name }}</h1>\n<p>{{ body }}</p>';

describe('nothing quietly lost in the studio', { timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let alice: { accountId: string; apiKey: string };
  const open: StudioPage[] = [];

  const studio = async (viewport = DESKTOP) => {
    const s = await openStudio(browser, t.baseUrl, viewport);
    open.push(s);
    return s;
  };
  const createTemplate = async (apiKey: string, body: Record<string, unknown>) => {
    const res = await t.request('POST', '/v1/templates', { apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; name: string };
  };
  const draftKeys = (page: Page) =>
    page.evaluate(() =>
      Array.from({ length: localStorage.length }, (_, i) => localStorage.key(i)!).filter((k) =>
        k.startsWith('pressroom.draft.'),
      ),
    );
  /** No sideways scrolling at phone width, and a screenshot to look at. */
  const fitsPhone = async (page: Page, name: string) => {
    await page.setViewportSize(PHONE);
    await layoutSettled(page);
    const overflow = await hasNoHorizontalOverflow(page);
    expect(overflow, `${name}: ${JSON.stringify(overflow)}`).toMatchObject({ ok: true });
    await screenshot(page, `phone-${name}`, { fullPage: true });
    await page.setViewportSize(DESKTOP);
  };

  beforeAll(async () => {
    ensureStudioBuild();
    t = await startTestApp('sqlite', { PRESSROOM_PLAN_PRO_PER_MINUTE: '1000' });
    alice = await t.createAccount({ credits: 20, email: 'alice@example.com', plan: 'pro' });
    [browser] = await Promise.all([launchBrowser(), t.services.renderer.warmUp()]);
  });

  afterAll(async () => {
    for (const s of open) await s.context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  it('keeps unsaved work, a syntax error included, through a closed tab and offers it back; saved or discarded, the copy goes', async () => {
    const template = await createTemplate(alice.apiKey, {
      name: 'Letter',
      html: LETTER,
      sample_data: { name: 'Ada', body: 'Hello' },
    });
    const s = await studio();
    const { page } = s;
    await signIn(page, alice.apiKey, `/templates/${template.id}`);
    await page.getByLabel('Name', { exact: true }).waitFor();
    // Half-finished: it does not parse, so Save cannot keep it on the service.
    const broken = '<h1>Letter to {{ name }}</h1>\n<p>{{ body </p>\n<p>P.S. {% if </p>';
    await setEditorText(page, 'html', broken);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('save-error').waitFor();
    await expect.poll(() => page.getByTestId('local-copy').getAttribute('data-state')).toBe('kept');
    expect(await draftKeys(page)).toEqual([`pressroom.draft.${alice.accountId}.${template.id}`]);

    // The tab goes without a word (as a crash would: no beforeunload, no save).
    await page.close();
    const again = await s.context.newPage();
    await signIn(again, alice.apiKey, `/templates/${template.id}`);
    const offer = again.getByTestId('local-offer');
    await offer.waitFor();
    expect(await offer.innerText()).toMatch(/You have unsaved changes from .+, kept in this browser\./);
    // Nothing restored before the user says so: the editor shows the saved text.
    expect((await editorLines(again, 'html')).join('\n')).toBe(LETTER);
    await screenshot(again, 'local-draft-offer');
    await fitsPhone(again, 'local-draft-offer');
    await offer.getByRole('button', { name: 'Restore' }).click();
    await expect.poll(async () => (await editorLines(again, 'html')).join('\n')).toBe(broken);
    expect(await again.getByTestId('save-state').innerText()).toBe('Unsaved changes');
    expect(await offer.count()).toBe(0);

    // Fixed and saved: the service has it and the local copy is gone.
    await setEditorText(again, 'html', '<h1>Letter to {{ name }}</h1>\n<p>{{ body }}</p>\n<p>P.S. Fixed</p>');
    await again.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => again.getByTestId('save-state').innerText()).toBe('Saved');
    await expect.poll(() => draftKeys(again)).toEqual([]);
    expect((await t.request('GET', `/v1/templates/${template.id}`, { apiKey: alice.apiKey })).body.html).toContain(
      'P.S. Fixed',
    );

    // Edited again, then left with "Discard changes": nothing is offered next time.
    await setEditorText(again, 'html', '<p>{{ name }} throwaway</p>');
    await expect.poll(() => again.getByTestId('local-copy').getAttribute('data-state')).toBe('kept');
    await again.getByRole('link', { name: '← Templates' }).click();
    const leave = again.getByRole('dialog', { name: 'Leave without saving?' });
    expect(await leave.innerText()).toContain('A copy stays in this browser');
    await leave.getByRole('button', { name: 'Discard changes' }).click();
    await again.getByRole('link', { name: 'Letter', exact: true }).waitFor();
    expect(await draftKeys(again)).toEqual([]);

    // Edited, kept, then discarded from the offer.
    await again.getByRole('link', { name: 'Letter', exact: true }).click();
    await setEditorText(again, 'html', '<p>{{ name }} second thoughts</p>');
    await expect.poll(() => again.getByTestId('local-copy').getAttribute('data-state')).toBe('kept');
    await again.getByRole('link', { name: '← Templates' }).click();
    await again
      .getByRole('dialog', { name: 'Leave without saving?' })
      .getByRole('button', { name: 'Leave, keep the copy' })
      .click();
    await again.getByRole('link', { name: 'Letter', exact: true }).click();
    await again.getByTestId('local-offer').getByRole('button', { name: 'Discard' }).click();
    expect(await draftKeys(again)).toEqual([]);
    expect((await editorLines(again, 'html')).join('\n')).toContain('P.S. Fixed');
    expect(s.problems).toEqual([]);
  });

  it("keeps each account's copies apart", async () => {
    const bob = await t.createAccount({ credits: 1, email: 'bob@example.com', plan: 'pro' });
    const mine = await createTemplate(bob.apiKey, { name: 'Bob letter', html: LETTER });
    const { page, context } = await studio();
    await signIn(page, bob.apiKey, `/templates/${mine.id}`);
    await setEditorText(page, 'html', '<p>{{ name }} from Bob</p>');
    await expect.poll(() => page.getByTestId('local-copy').getAttribute('data-state')).toBe('kept');
    expect(await draftKeys(page)).toEqual([`pressroom.draft.${bob.accountId}.${mine.id}`]);
    // Alice, in the same browser, opening her own template of the same text, is offered nothing of Bob's.
    const hers = await createTemplate(alice.apiKey, { name: 'Alice letter', html: LETTER });
    const other = await context.newPage();
    await signIn(other, alice.apiKey, `/templates/${hers.id}`);
    await other.getByLabel('Name', { exact: true }).waitFor();
    await layoutSettled(other);
    expect(await other.getByTestId('local-offer').count()).toBe(0);
  });

  it('says up front what this Pressroom cannot do: validate e-invoices, time-stamp without an authority named', async () => {
    const { page, problems } = await studio();
    const sent: string[] = [];
    page.on(
      'request',
      (request) => /\/v1\/(einvoice\/validate|pdf-tools\/sign)/.test(request.url()) && sent.push(request.url()),
    );
    await signIn(page, alice.apiKey, '/tools/einvoice');
    const notice = page.getByTestId('einvoice-unavailable');
    await notice.waitFor();
    expect(await notice.innerText()).toContain(
      'This Pressroom cannot check e-invoices yet: the official e-invoice rules are not installed on it. Ask whoever runs it to install them',
    );
    expect(await notice.innerText()).not.toMatch(/PRESSROOM_|pressroom einvoice|\/v1\//);
    expect(await page.getByTestId('einvoice-drop').count()).toBe(0);
    await screenshot(page, 'einvoice-unavailable');
    await fitsPhone(page, 'einvoice-unavailable');

    // The Sign tool: ticking the time-stamp says an authority is needed, and nothing is sent without one.
    await page.getByRole('link', { name: 'PDF tools' }).click();
    await page.getByRole('tab', { name: 'Sign' }).click();
    await page.getByLabel('Time-stamp the signature (PAdES B-T)').check();
    const needed = page.getByTestId('tsa-needed');
    await needed.waitFor();
    expect(await needed.innerText()).toContain('this Pressroom has no time-stamp service of its own');
    expect(await needed.innerText()).not.toMatch(/PRESSROOM_|TSA_URL/);
    expect(await page.getByLabel('Time-stamp authority URL', { exact: true }).count()).toBe(1);
    await screenshot(page, 'pdf-tools-tsa-needed');
    await fitsPhone(page, 'pdf-tools-tsa-needed');
    expect(sent).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('names what a refund gives back, filters transactions by type and batch, and says Jobs lists background jobs', async () => {
    const carol = await t.createAccount({ credits: 10, email: 'carol@example.com', plan: 'pro' });
    const template = await createTemplate(carol.apiKey, { name: 'Receipt', html: '<p>{{ name }}</p>' });
    // No worker runs in this file: the batch waits, and its cancel refunds every item.
    const batch = await t.request('POST', '/v1/pdf/batches', {
      apiKey: carol.apiKey,
      body: { template_id: template.id, items: [{ data: { name: 'A' } }, { data: { name: 'B' } }] },
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(202);
    const batchId = batch.body.batch_id as string;
    expect((await t.request('POST', `/v1/pdf/batches/${batchId}/cancel`, { apiKey: carol.apiKey })).status).toBe(200);
    const job = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: carol.apiKey,
      body: { template_id: template.id, data: { name: 'C' } },
    });
    expect(job.status).toBe(200);

    const { page, problems } = await studio();
    await signIn(page, carol.apiKey, '/transactions');
    const rows = page.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(6);
    const refund = rows.filter({ hasText: 'Refund' }).first();
    expect(await refund.locator('td[data-label="For"]').innerText()).toBe(
      `Refund of Receipt ${template.id} (a document of batch ${batchId})`,
    );
    expect(await rows.first().locator('td[data-label="For"]').innerText()).toBe(
      `Receipt ${template.id}, background job ${job.body.job_id}`,
    );
    expect(await rows.last().locator('td[data-label="For"]').innerText()).toBe('Credits given');

    await page.getByLabel('Type').selectOption('REFUND');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.locator('td[data-label="Type"]').allInnerTexts()).toEqual(['Refund', 'Refund']);
    await page.getByLabel('Type').selectOption('');
    await refund.locator('td[data-label="For"]').getByRole('button', { name: batchId }).click();
    await expect.poll(() => rows.count()).toBe(4);
    expect(await page.getByLabel('Batch').inputValue()).toBe(batchId);
    await screenshot(page, 'transactions-filtered');
    await fitsPhone(page, 'transactions-filtered');

    await page.getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.getByRole('heading', { name: 'Background jobs' }).waitFor();
    expect(await page.getByTestId('jobs-scope').innerText()).toContain('Documents made at once are not listed here');
    expect(problems).toEqual([]);
  });

  it('starts a blank template; the form follows the HTML as it is typed, and sample keys no field uses leave the data and snippets', async () => {
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey, '/templates');
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByLabel('Template name').fill('From scratch');
    await page.getByRole('radio', { name: 'Blank page' }).check();
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/\/templates\/[A-Za-z0-9_-]{12}$/);
    await page.getByText('This template has no fields yet').waitFor();
    await page.getByRole('tab', { name: 'JSON' }).click();
    expect(JSON.parse((await editorLines(page, 'sample-data')).join('\n'))).toEqual({});
    await page.getByRole('tab', { name: 'Form' }).click();

    // Typed, not saved: the form has the new field (a field called "title" is labelled, not the Data heading).
    await setEditorText(page, 'html', '<h1>Dear {{ customer_name }}</h1>');
    await page.getByLabel('Customer name').waitFor();
    expect(await page.getByTestId('save-state').innerText()).toBe('Unsaved changes');
    await page.getByLabel('Customer name').fill('Grace');
    await screenshot(page, 'editor-live-fields');

    // The example starter: its invoice data goes once the HTML stops using it, from the form, JSON and snippets.
    await page.getByRole('link', { name: '← Templates' }).click();
    await page
      .getByRole('dialog', { name: 'Leave without saving?' })
      .getByRole('button', { name: 'Discard changes' })
      .click();
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByLabel('Template name').fill('Started from the example');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/\/templates\/[A-Za-z0-9_-]{12}$/);
    await page.getByLabel('Customer name').waitFor();
    const run = page.getByRole('region', { name: 'Run', exact: true });
    expect(await run.locator('pre').first().innerText()).toContain('Ada Lovelace');
    // Run renders the draft: its version choice and help call it that.
    expect(await run.getByLabel('Template', { exact: true }).locator('option').first().innerText()).toBe('The draft');
    expect(await run.innerText()).toContain('Uses the data in the form and the draft');
    await setEditorText(page, 'html', '<p>Notes for {{ title }}</p>');
    await page.getByLabel('Title').waitFor();
    expect(await page.getByLabel('Customer name').count()).toBe(0);
    await page.getByRole('tab', { name: 'JSON' }).click();
    await expect
      .poll(async () => Object.keys(JSON.parse((await editorLines(page, 'sample-data')).join('\n'))))
      .toEqual([]);
    await expect.poll(() => run.locator('pre').first().innerText()).not.toContain('Ada Lovelace');
    expect(await run.locator('pre').first().innerText()).not.toContain('invoice');
    expect(await run.innerText()).toContain('the draft as last saved: save first to run your unsaved changes');
    // A key comes back with its value when a field uses it again.
    await setEditorText(page, 'html', '<p>Notes for {{ title }}, {{ customer.name }}</p>');
    await expect
      .poll(async () => JSON.parse((await editorLines(page, 'sample-data')).join('\n')))
      .toEqual({ customer: { name: 'Ada Lovelace' } });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByTestId('save-state').innerText()).toBe('Saved');
    const id = page.url().split('/').pop()!;
    expect((await t.request('GET', `/v1/templates/${id}`, { apiKey: alice.apiKey })).body.sample_data).toEqual({
      customer: { name: 'Ada Lovelace' },
    });
    await page.getByRole('tab', { name: 'Form' }).click();
    await fitsPhone(page, 'editor-live-fields');
    expect(problems).toEqual([]);
  });

  it('lays the last-key dialog and the S3 form in words out at phone width', async () => {
    const dora = await t.createAccount({ credits: 1, email: 'dora@example.com', plan: 'pro' });
    const { page, problems } = await studio(PHONE);
    await signIn(page, dora.apiKey, '/settings/api-keys');
    await page.getByRole('button', { name: `Revoke key ${dora.apiKey.slice(0, 12)}` }).click();
    await page.getByRole('dialog', { name: 'This is your last API key' }).waitFor();
    await fitsPhone(page, 'api-keys-last');
    await page.getByRole('button', { name: 'Keep this key' }).click();
    expect((await t.request('GET', '/v1/account', { apiKey: dora.apiKey })).status).toBe(200);

    await page.getByRole('link', { name: 'S3 storage' }).click();
    await page.getByText('Not configured').waitFor();
    await page.getByLabel('Bucket').fill('My_Bucket');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Some settings are not valid').waitFor();
    expect(await page.getByLabel('Secret access key').getAttribute('aria-invalid')).toBe('true');
    await fitsPhone(page, 's3-invalid');
    expect(problems).toEqual([]);
  });
});
