/**
 * PDF tools and signed inputs (issue 49) over real HTTP (SQLite): every tool that would break a
 * signature — rewriting the file, or making a new document of its pages — refuses a signed PDF with the
 * reason and for free, or with `allow_breaking_signatures: true` does the work and says so in
 * `warnings`; signing a signed PDF again (an incremental update) keeps the first signature valid. The
 * signatures are judged by poppler's pdfsig, the ledger by the account's transactions.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSigningKit, type SigningKit } from '../../support/documents/signing-kit.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

async function contractPdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i += 1)
    doc.addPage([300, 400]).drawText(`Contract page ${i}`, { x: 30, y: 300, size: 18, font });
  return Buffer.from(await doc.save());
}

/** pdfsig's verdicts, one per signature (trust not judged). */
function verdicts(pdf: Buffer): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'signed-inputs-test-'));
  try {
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    let out: string;
    try {
      out = execFileSync('pdfsig', ['-nocert', 'doc.pdf'], {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    } catch (error) {
      out = String((error as { stdout?: string }).stdout ?? '');
    }
    return [...out.matchAll(/Signature Validation: (.*)/g)].map((m) => m[1]!);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('PDF tools on a signed PDF', () => {
  let t: TestApp;
  let kit: SigningKit;
  let user: { accountId: string; apiKey: string };
  let plain: string;
  let signed: string;
  const b64 = (b: Buffer) => b.toString('base64');
  const tool = (name: string, body: Record<string, unknown>) =>
    t.request('POST', `/v1/pdf-tools/${name}`, { apiKey: user.apiKey, body });
  const ledger = async () => ({
    credits: (await t.request('GET', '/v1/account', { apiKey: user.apiKey })).body.credits as number,
    transactions: (
      (await t.request('GET', '/v1/account/transactions?limit=1000', { apiKey: user.apiKey })).body
        .transactions as unknown[]
    ).length,
  });
  const settled = () =>
    until(async () => (await t.services.charges.pendingCount(user.accountId)) === 0, 30_000, 'charges settled');

  beforeAll(async () => {
    kit = createSigningKit();
    t = await startTestApp('sqlite');
    user = await t.createAccount({ credits: 50, plan: 'enterprise' });
    const added = await t.request('POST', '/v1/certificates', {
      apiKey: user.apiKey,
      body: { name: 'ada', pkcs12_base64: b64(kit.pkcs12({ cn: 'Ada', password: 'pw' })), password: 'pw' },
    });
    expect(added.status).toBe(201);
    plain = b64(await contractPdf(3));
    const res = await tool('sign', { pdf_base64: plain, certificate: 'ada', export_type: 'binary' });
    expect(res.status).toBe(200);
    signed = b64(res.bytes);
  });
  afterAll(async () => {
    await t?.close();
    kit?.close();
  });

  /** Each tool that would break the signature, its own fields, and where its input is named. */
  const TOOLS: [string, () => Record<string, unknown>, (string | number)[]][] = [
    ['protect', () => ({ pdf_base64: signed, protect: { owner_password: 'owner-secret-1' } }), ['body', 'pdf_base64']],
    ['watermark', () => ({ pdf_base64: signed, watermark: { text: 'COPY' } }), ['body', 'pdf_base64']],
    ['metadata', () => ({ pdf_base64: signed, metadata: { title: 'Changed' } }), ['body', 'pdf_base64']],
    ['rotate', () => ({ pdf_base64: signed, rotation: 90 }), ['body', 'pdf_base64']],
    ['flatten', () => ({ pdf_base64: signed }), ['body', 'pdf_base64']],
    ['extract-pages', () => ({ pdf_base64: signed, pages: '1' }), ['body', 'pdf_base64']],
    ['split', () => ({ pdf_base64: signed, every: 1 }), ['body', 'pdf_base64']],
    ['merge', () => ({ pdfs: [{ pdf_base64: plain }, { pdf_base64: signed }] }), ['body', 'pdfs', 1, 'pdf_base64']],
  ];

  it.each(TOOLS)(
    '%s refuses a signed PDF: 422 pdf_signed naming the input, nothing charged',
    async (name, body, loc) => {
      const before = await ledger();
      const res = await tool(name, body());
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail[0]).toMatchObject({
        loc,
        type: 'pdf_signed',
        msg: expect.stringContaining('allow_breaking_signatures: true'),
      });
      expect(await ledger()).toEqual(before);
    },
  );

  it('unlock refuses an encrypted signed PDF the same way', async () => {
    const locked = await tool('protect', {
      pdf_base64: signed,
      protect: { owner_password: 'owner-secret-1' },
      allow_breaking_signatures: true,
      export_type: 'binary',
    });
    expect(locked.status).toBe(200);
    await settled();
    const before = await ledger();
    const res = await tool('unlock', { pdf_base64: b64(locked.bytes), password: 'owner-secret-1' });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'pdf_base64'], type: 'pdf_signed' });
    expect(await ledger()).toEqual(before);
  });

  it('with allow_breaking_signatures: true, protects it for a credit and says the signature no longer verifies (a header on binary answers)', async () => {
    const before = (await ledger()).credits;
    const res = await tool('protect', {
      pdf_base64: signed,
      protect: { owner_password: 'owner-secret-1' },
      allow_breaking_signatures: true,
      export_type: 'binary',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pressroom-warnings')).toBe('1');
    expect(JSON.parse(res.headers.get('x-pressroom-warning-details')!)).toEqual([
      { code: 'SIGNATURES_INVALIDATED', message: expect.stringContaining('no longer verifies') },
    ]);
    expect(verdicts(res.bytes)).toEqual(['Digest Mismatch.']);
    await settled();
    expect((await ledger()).credits).toBe(before - 1);
  });

  it('with allow_breaking_signatures: true, watermarks it and splits it, each answer listing the warning', async () => {
    const marked = await tool('watermark', {
      pdf_base64: signed,
      watermark: { text: 'COPY' },
      allow_breaking_signatures: true,
    });
    expect(marked.status, JSON.stringify(marked.body)).toBe(200);
    expect(marked.body.warnings).toEqual([
      { code: 'SIGNATURES_INVALIDATED', message: expect.stringContaining('body.pdf_base64 was signed') },
    ]);
    const parts = await tool('split', { pdf_base64: signed, every: 1, allow_breaking_signatures: true });
    expect(parts.status, JSON.stringify(parts.body)).toBe(200);
    expect(parts.body.files).toHaveLength(3);
    expect(parts.body.warnings[0]).toMatchObject({
      code: 'SIGNATURES_INVALIDATED',
      message: expect.stringContaining('the result is not signed'),
    });
  });

  it('signs a signed PDF again, as an incremental update: both signatures valid, the last covering the whole file', async () => {
    const res = await tool('sign', { pdf_base64: signed, certificate: 'ada', export_type: 'binary' });
    expect(res.status).toBe(200);
    expect(verdicts(res.bytes)).toEqual(['Signature is Valid.', 'Signature is Valid.']);
    const report = await tool('verify', { pdf_base64: b64(res.bytes) });
    expect(report.body).toMatchObject({ signed: true, intact: true, modified_after_signing: false });
    expect(report.body.signatures.map((s: { covers_whole_document: boolean }) => s.covers_whole_document)).toEqual([
      false,
      true,
    ]);
  });

  it('an unsigned PDF goes through every tool as before, without a warning', async () => {
    const res = await tool('rotate', { pdf_base64: plain, rotation: 90 });
    expect(res.status).toBe(200);
    expect(res.body.warnings).toBeUndefined();
  });

  it('declares allow_breaking_signatures on every tool that would break a signature, and on no other, in the OpenAPI document', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const declares = (path: string) =>
      'allow_breaking_signatures' in
      (doc.paths[path].post.requestBody.content['application/json'].schema.properties ?? {});
    const tools = Object.keys(doc.paths).filter((path) => path.startsWith('/v1/pdf-tools/'));
    expect(tools.filter(declares).sort()).toEqual(
      [...TOOLS.map(([name]) => `/v1/pdf-tools/${name}`), '/v1/pdf-tools/unlock'].sort(),
    );
    // Sign keeps signatures; verify and check-accessibility only read the PDF.
    expect(tools.filter((path) => !declares(path)).sort()).toEqual([
      '/v1/pdf-tools/check-accessibility',
      '/v1/pdf-tools/sign',
      '/v1/pdf-tools/verify',
    ]);
  });
});
