/**
 * The studio's finishing (issue 39) end to end: the real service in-process (SQLite) with a real RFC
 * 3161 time-stamp authority on loopback, certificates made in the test with OpenSSL, the built web app in
 * Debian's Chromium. Asserts what a user gets: the certificates listed with their validity, the signed
 * PDF as poppler's pdfsig reads it, the verify report on screen, and Run's finished PDF.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Download, Page } from 'playwright-core';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import {
  createSigningKit,
  startTsaServer,
  type SigningKit,
  type TsaServer,
} from '../../support/documents/signing-kit.js';
import { pdfInfo, pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { warmUpPatiently } from '../../support/documents/rendering-kit.js';
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

async function makePdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++)
    doc.addPage([300, 200]).drawText(`Contract page ${i}`, { x: 20, y: 100, size: 18, font });
  return Buffer.from(await doc.save());
}

/** pdfsig's report of a PDF (certificate trust not judged: the test CA is nobody's anchor). */
function pdfsig(pdf: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'studio-finishing-'));
  try {
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    return execFileSync('pdfsig', ['-nocert', 'doc.pdf'], { cwd: dir, encoding: 'utf8' });
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** qpdf's account of a PDF's encryption. */
function encryption(pdf: Buffer, password?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'studio-finishing-'));
  try {
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    return execFileSync('qpdf', ['--show-encryption', ...(password ? [`--password=${password}`] : []), 'doc.pdf'], {
      cwd: dir,
      encoding: 'utf8',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The names of the files in a zip (unzip -Z1). */
function zipNames(zip: Buffer): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'studio-finishing-'));
  try {
    writeFileSync(join(dir, 'parts.zip'), zip);
    return execFileSync('unzip', ['-Z1', 'parts.zip'], { cwd: dir, encoding: 'utf8' }).trim().split('\n').sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `action` and returns the bytes of the download it starts. */
async function downloaded(page: Page, action: () => Promise<unknown>): Promise<Buffer> {
  const [download] = (await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), action()])) as [
    Download,
    unknown,
  ];
  return readFileSync((await download.path())!);
}

const file = (name: string, buffer: Buffer, mimeType = 'application/pdf') => ({ name, mimeType, buffer });

// Generous timeouts: the machine's two cores are shared with other Chromium work.
describe('studio finishing in Chromium', { timeout: 240_000 }, () => {
  let t: TestApp;
  let kit: SigningKit;
  let tsa: TsaServer;
  let browser: Browser;
  let alice: { accountId: string; apiKey: string };
  const open: StudioPage[] = [];

  const studio = async () => {
    const s = await openStudio(browser, t.baseUrl);
    open.push(s);
    return s;
  };
  const credits = async () => (await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).body.credits as number;
  const certificateNames = async () =>
    (
      (await t.request('GET', '/v1/certificates', { apiKey: alice.apiKey })).body.certificates as { name: string }[]
    ).map((c) => c.name);

  beforeAll(async () => {
    ensureStudioBuild();
    kit = createSigningKit();
    tsa = await startTsaServer();
    // The TSA is on loopback: the outbound guard lets it through only with private networks allowed.
    t = await startTestApp('sqlite', { PRESSROOM_ALLOW_PRIVATE_NETWORKS: 'true', PRESSROOM_TSA_URL: tsa.url });
    alice = await t.createAccount({ credits: 20, email: 'alice@example.com', plan: 'pro' });
    [browser] = await Promise.all([launchBrowser(), warmUpPatiently(t.services.renderer)]);
  });

  afterAll(async () => {
    for (const s of open) await s.context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
    await tsa?.close();
    kit?.close();
  });

  it('uploads certificates (a wrong password said as such), lists them with their validity, deletes one; signs a PDF on the tools screen and verifies it intact; protects, unlocks, splits and sets the document information', async () => {
    const ada = kit.pkcs12({ cn: 'Ada Lovelace', password: 'pw-ada', days: 365 });
    const soon = kit.pkcs12({ cn: 'Short Lived', password: 'pw-soon', days: 5 });
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey);
    await page.getByRole('link', { name: 'Certificates' }).click();
    await page.waitForURL(/\/settings\/certificates$/);
    await page.getByText('No certificates yet.').waitFor();

    // A wrong password: refused in the form's terms, nothing stored.
    await page.getByLabel('PKCS#12 file').setInputFiles([file('ada.p12', ada, 'application/x-pkcs12')]);
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('ada');
    await page.getByLabel('Password', { exact: true }).fill('not-it');
    await page.getByRole('button', { name: 'Upload certificate' }).click();
    await expect
      .poll(() => page.getByTestId('certificate-error').innerText())
      .toContain('Password: The password does not open this PKCS#12 file (pkcs12_password)');
    expect(await certificateNames()).toEqual([]);

    await page.getByLabel('Password', { exact: true }).fill('pw-ada');
    await page.getByRole('button', { name: 'Upload certificate' }).click();
    const row = (name: string) => page.locator(`tr[data-certificate="${name}"]`);
    await row('ada').waitFor();
    expect(await row('ada').innerText()).toContain('CN=Ada Lovelace, O=Pressroom Test');
    expect(await row('ada').innerText()).toContain('CN=Pressroom Test CA');
    expect(await row('ada').getByTestId('certificate-validity').getAttribute('data-state')).toBe('valid');

    // One that runs out within the month is marked.
    await page.getByLabel('PKCS#12 file').setInputFiles([file('soon.pfx', soon, 'application/x-pkcs12')]);
    await page.getByLabel('Password', { exact: true }).fill('pw-soon');
    await page.getByRole('button', { name: 'Upload certificate' }).click();
    await row('soon').waitFor();
    expect(await row('soon').getByTestId('certificate-validity').getAttribute('data-state')).toBe('near-expiry');
    expect(await row('soon').getByTestId('certificate-validity').innerText()).toMatch(/^expires in [45] days$/);
    await screenshot(page, 'certificates');
    // The list at phone width: no sideways scrolling.
    await page.setViewportSize(PHONE);
    await layoutSettled(page);
    expect(await hasNoHorizontalOverflow(page)).toMatchObject({ ok: true });
    await screenshot(page, 'phone-certificates', { fullPage: true });
    await page.setViewportSize(DESKTOP);
    await page.getByRole('button', { name: 'Delete certificate soon' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete certificate' }).click();
    await expect.poll(() => row('soon').count()).toBe(0);
    expect(await certificateNames()).toEqual(['ada']);

    // Sign on the PDF tools screen, time-stamped: pdfsig finds Ada's valid signature.
    const before = await credits();
    await page.getByRole('link', { name: 'PDF tools' }).click();
    await page.getByRole('tab', { name: 'Sign' }).click();
    await page.getByLabel('PDF', { exact: true }).setInputFiles([file('contract.pdf', await makePdf(2))]);
    await page.getByLabel('Certificate').selectOption('ada');
    await page.getByLabel('Reason (optional)').fill('Approved');
    await page.getByLabel('Time-stamp the signature (PAdES B-T)').check();
    const signed = await downloaded(page, () => page.getByRole('button', { name: 'Sign (1 credit)' }).click());
    const report = pdfsig(signed);
    expect(report).toContain('Signer Certificate Common Name: Ada Lovelace');
    expect(report).toContain('Signature Validation: Signature is Valid.');
    expect(await page.getByTestId('tool-result-link').innerText()).toBe('contract-signed.pdf');
    expect(await credits()).toBe(before - 1);

    // Verify reports it intact, signed by Ada with a time-stamp; free.
    await page.getByRole('tab', { name: 'Verify' }).click();
    await page.getByLabel('PDF', { exact: true }).setInputFiles([file('contract-signed.pdf', signed)]);
    await page.getByRole('button', { name: 'Verify (free)' }).click();
    await expect
      .poll(() => page.getByTestId('verify-verdict').innerText())
      .toContain('Intact: contract-signed.pdf is exactly as signed.');
    const signature = await page.getByTestId('verify-signature').innerText();
    expect(signature).toContain('Signed by Ada Lovelace');
    expect(signature).toContain('time-stamped');
    expect(signature).toContain('signature valid');
    await screenshot(page, 'pdf-tools-verify');
    expect(await credits()).toBe(before - 1);

    // Protect, then unlock with the owner password: qpdf sees AES-256, then no encryption.
    await page.getByRole('tab', { name: 'Protect' }).click();
    await page.getByLabel('PDF', { exact: true }).setInputFiles([file('contract.pdf', await makePdf(1))]);
    await page.getByLabel('Owner password (lifts the permissions)').fill('owner-secret');
    await page.getByLabel('User password (optional; needed to open)').fill('open-me');
    const locked = await downloaded(page, () => page.getByRole('button', { name: 'Protect (1 credit)' }).click());
    expect(encryption(locked, 'owner-secret')).toMatch(/AESv3|AES-256|aes256/i);
    await page.getByRole('tab', { name: 'Unlock' }).click();
    await page.getByLabel('PDF', { exact: true }).setInputFiles([file('contract-protected.pdf', locked)]);
    await page.getByLabel('Password of the PDF').fill('wrong');
    await page.getByRole('button', { name: 'Unlock (1 credit)' }).click();
    await expect.poll(() => page.getByTestId('tool-error').innerText()).toContain('Password: ');
    await page.getByLabel('Password of the PDF').fill('open-me');
    const unlocked = await downloaded(page, () => page.getByRole('button', { name: 'Unlock (1 credit)' }).click());
    expect(encryption(unlocked)).toContain('File is not encrypted');

    // Split into a zip of parts, and set the document information.
    await page.getByRole('tab', { name: 'Split' }).click();
    await page.getByLabel('PDF', { exact: true }).setInputFiles([file('report.pdf', await makePdf(3))]);
    await page.getByLabel('Parts (ranges)').fill('1, 2-');
    const zip = await downloaded(page, () => page.getByRole('button', { name: 'Split (1 credit)' }).click());
    expect(zipNames(zip)).toEqual(['report-parts-1.pdf', 'report-parts-2-3.pdf']);
    await page.getByRole('tab', { name: 'Document info' }).click();
    await page.getByLabel('PDF', { exact: true }).setInputFiles([file('report.pdf', await makePdf(1))]);
    await page.getByLabel('Title').fill('Quarterly report');
    await page.getByLabel('Author').fill('Ада Лавлейс');
    const titled = await downloaded(page, () => page.getByRole('button', { name: 'Document info (1 credit)' }).click());
    expect(pdfInfo(titled)).toMatchObject({ Title: 'Quarterly report', Author: 'Ада Лавлейс' });
    expect(await credits()).toBe(before - 5);
    expect(problems).toEqual([]);
  });

  it('runs a template watermarked and signed with the chosen certificate; refuses a signature with protection before sending', async () => {
    const res = await t.request('POST', '/v1/templates', {
      apiKey: alice.apiKey,
      body: { name: 'Contract', html: '<h1>Contract for {{ name }}</h1>', sample_data: { name: 'Ada' } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    if (!(await certificateNames()).includes('ada')) {
      const up = await t.request('POST', '/v1/certificates', {
        apiKey: alice.apiKey,
        body: {
          name: 'ada',
          pkcs12_base64: kit.pkcs12({ cn: 'Ada Lovelace', password: 'pw' }).toString('base64'),
          password: 'pw',
        },
      });
      expect(up.status).toBe(201);
    }
    const { page, problems } = await studio();
    await signIn(page, alice.apiKey, `/templates/${res.body.id}`);
    const run = page.getByRole('region', { name: 'Run' });
    await run.getByLabel('PDF file').check();
    await run.getByLabel('Sign the PDF').check();
    // Ticked without a certificate: said, and nothing sent.
    await run.getByTestId('finishing-problem').waitFor();
    expect(await run.getByRole('button', { name: 'Generate PDF' }).isDisabled()).toBe(true);
    await run.getByLabel('Certificate').selectOption('ada');
    await run.getByLabel('Signature location (optional)').fill('London');
    // Protection with a signature: the service would refuse it; said here, nothing sent.
    await run.getByLabel('Protect with passwords').check();
    await run.getByLabel('Owner password').fill('owner-secret');
    await expect.poll(() => run.getByTestId('finishing-problem').innerText()).toContain('cannot go together');
    expect(await run.getByRole('button', { name: 'Generate PDF' }).isDisabled()).toBe(true);
    await run.getByLabel('Protect with passwords').uncheck();
    await run.getByLabel('Add a watermark').check();
    await run.getByLabel('Watermark text').fill('Draft for review');
    await run.getByLabel('Watermark opacity (0.05–1)').fill('0.2');
    const before = await credits();
    const pdf = await downloaded(page, () => run.getByRole('button', { name: 'Generate PDF' }).click());
    expect(pdfText(pdf)).toContain('Contract for Ada');
    expect(pdfText(pdf)).toContain('Draft for review');
    const report = pdfsig(pdf);
    expect(report).toContain('Signer Certificate Common Name: Ada Lovelace');
    expect(report).toContain('Signature Validation: Signature is Valid.');
    await expect.poll(credits).toBe(before - 1);

    // A PDF asset as the watermark, and the signature shown in a box on page 1 (covered by the signature).
    const stamp = await t.request('POST', '/v1/assets', {
      apiKey: alice.apiKey,
      body: { name: 'marks/approved.pdf', content_base64: (await makePdf(1)).toString('base64') },
    });
    expect(stamp.status, JSON.stringify(stamp.body)).toBe(201);
    await page.reload();
    await run.getByLabel('PDF file').check();
    await run.getByLabel('Add a watermark').check();
    await run.getByLabel('Watermark from').selectOption('asset');
    await run.getByLabel('Watermark asset').selectOption('marks/approved.pdf');
    await run.getByLabel('Sign the PDF').check();
    await run.getByLabel('Certificate').selectOption('ada');
    await run.getByLabel('Show the signature on a page').check();
    const shown = await downloaded(page, () => run.getByRole('button', { name: 'Generate PDF' }).click());
    const shownText = pdfText(shown);
    expect(shownText).toContain('Contract for Ada');
    // The stamp's own text, drawn at the default 45° (pdftotext breaks turned text into pieces).
    expect(shownText.replace(/\s+/g, '')).toContain('Contractpage1');
    expect(shownText).toContain('Digitally signed by Ada Lovelace');
    expect(pdfsig(shown)).toContain('Signature Validation: Signature is Valid.');

    // Protection with the printing and copying permissions chosen.
    await page.reload();
    await run.getByLabel('PDF file').check();
    await run.getByLabel('Protect with passwords').check();
    await run.getByLabel('Owner password').fill('owner-secret');
    await run.getByLabel('Printing').selectOption('low');
    await run.getByLabel('Allow copying text and images').check();
    const locked = await downloaded(page, () => run.getByRole('button', { name: 'Generate PDF' }).click());
    const shownEncryption = encryption(locked, 'owner-secret');
    expect(shownEncryption).toMatch(/print low resolution: allowed/);
    expect(shownEncryption).toMatch(/print high resolution: not allowed/);
    expect(shownEncryption).toMatch(/extract for any purpose: allowed/);
    await expect.poll(credits).toBe(before - 3);
    expect(problems).toEqual([]);
  });
});
