/**
 * Signing over real HTTP (SQLite, one app): certificates made in the test with OpenSSL, a real RFC 3161
 * time-stamp authority on loopback (`openssl ts -reply`), and independent checks of the results —
 * poppler's pdfsig for the signature and its signer, `openssl ts -verify` for the token inside it, the
 * service's own PDF/A check for a signed PDF/A-2b — plus every refusal charging nothing.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPdfA } from '../../../src/finishing/pdfa-check.js';
import {
  createSigningKit,
  startTsaServer,
  type SigningKit,
  type TsaServer,
} from '../../support/documents/signing-kit.js';
import { completedJobPdf, createTemplates, startTestApp, until, type TestApp } from '../../support/test-app.js';

async function makePdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i += 1)
    doc.addPage([300, 400]).drawText(`Contract page ${i}`, { x: 30, y: 300, size: 18, font });
  return Buffer.from(await doc.save());
}

function inTempDir<T>(work: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'signing-test-'));
  try {
    return work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** pdfsig's report, certificate trust not judged (the test CA is nobody's anchor). */
const pdfsig = (pdf: Buffer): string =>
  inTempDir((dir) => {
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    try {
      return execFileSync('pdfsig', ['-nocert', 'doc.pdf'], { cwd: dir, encoding: 'utf8' });
    } catch (error) {
      return String((error as { stdout?: string }).stdout ?? error);
    }
  });

/**
 * `openssl ts -verify` on the time-stamp token inside the first signature: the CMS dumped by pdfsig, the
 * token (the value of the id-aa-timeStampToken attribute) cut out with `openssl asn1parse`, verified
 * against the TSA's CA for the imprint it carries (`openssl ts -reply -token_in -text` prints it). That
 * the imprint is the signature's own digest is what the service checks before embedding the token.
 */
function verifyTimestampToken(pdf: Buffer, tsa: TsaServer): { verification: string; time: string } {
  return inTempDir((dir) => {
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    execFileSync('pdfsig', ['-nocert', '-dump', 'doc.pdf'], { cwd: dir });
    const cms = join(dir, readdirSync(dir).find((f) => f.endsWith('.sig0'))!);
    const parsed = execFileSync('openssl', ['asn1parse', '-inform', 'DER', '-in', cms], { encoding: 'utf8' }).split(
      '\n',
    );
    const at = parsed.findIndex((line) => line.includes('id-smime-aa-timeStampToken'));
    // The next lines: SET, then the token's SEQUENCE (a ContentInfo) — its offset is the first field.
    const token = parsed.slice(at + 1).find((line) => /cons: SEQUENCE/.test(line))!;
    const offset = token.trim().split(':')[0]!;
    const tokenFile = join(dir, 'token.der');
    execFileSync('openssl', [
      'asn1parse',
      '-inform',
      'DER',
      '-in',
      cms,
      '-strparse',
      offset,
      '-noout',
      '-out',
      tokenFile,
    ]);
    const text = execFileSync('openssl', ['ts', '-reply', '-in', tokenFile, '-token_in', '-text', '-token_out'], {
      encoding: 'utf8',
    });
    const imprint = /Message data:\n((?:\s+[0-9a-f]{4} - .*\n)+)/
      .exec(text)![1]!
      .split('\n')
      .map((line) =>
        line
          .replace(/^\s+[0-9a-f]{4} - /, '')
          .slice(0, 48)
          .replace(/[^0-9a-f]/g, ''),
      )
      .join('');
    const verification = execFileSync(
      'openssl',
      [
        'ts',
        '-verify',
        '-token_in',
        '-in',
        tokenFile,
        '-digest',
        imprint,
        '-CAfile',
        tsa.caFile,
        '-untrusted',
        tsa.certFile,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    // The token's own time, as OpenSSL reads it ("Time stamp: Nov 28 15:10:01 2026 GMT").
    return { verification, time: /Time stamp: (.+)/.exec(text)![1]!.trim() };
  });
}

describe('signing', () => {
  let t: TestApp;
  let kit: SigningKit;
  let tsa: TsaServer;
  let user: { accountId: string; apiKey: string };
  let contract: Buffer;
  let adaP12: Buffer;
  const b64 = (b: Buffer) => b.toString('base64');
  const balance = async (apiKey = user.apiKey) =>
    (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const settled = () =>
    until(async () => (await t.services.charges.pendingCount(user.accountId)) === 0, 30_000, 'charges settled');
  const upload = (body: Record<string, unknown>, apiKey = user.apiKey) =>
    t.request('POST', '/v1/certificates', { apiKey, body });
  const sign = (body: Record<string, unknown>) =>
    t.request('POST', '/v1/pdf-tools/sign', {
      apiKey: user.apiKey,
      body: { pdf_base64: b64(contract), export_type: 'binary', ...body },
    });

  beforeAll(async () => {
    kit = createSigningKit();
    tsa = await startTsaServer();
    // The TSA is on loopback: the guard lets it through only with private networks allowed.
    t = await startTestApp(
      'sqlite',
      { PRESSROOM_ALLOW_PRIVATE_NETWORKS: 'true', PRESSROOM_TSA_URL: tsa.url },
      { captureLogs: true },
    );
    user = await t.createAccount({ credits: 100, plan: 'enterprise' });
    contract = await makePdf(3);
    adaP12 = kit.pkcs12({ cn: 'Ada Lovelace', password: 'pw-ada' });
    const res = await upload({ name: 'ada', pkcs12_base64: b64(adaP12), password: 'pw-ada' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    await tsa?.close();
    kit?.close();
  });

  it('stores a certificate: its facts shown, its key and password never; listed per account; deleted', async () => {
    const listed = await t.request('GET', '/v1/certificates', { apiKey: user.apiKey });
    expect(listed.body.certificates).toEqual([
      expect.objectContaining({
        name: 'ada',
        subject: 'CN=Ada Lovelace, O=Pressroom Test',
        issuer: 'CN=Pressroom Test CA',
        fingerprint_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain('pw-ada');
    const row = await t.services.database.db
      .selectFrom('signing_certificates')
      .selectAll()
      .where('name', '=', 'ada')
      .executeTakeFirstOrThrow();
    expect(row.pkcs12_sealed).toMatch(/^v1\./);
    expect(row.pkcs12_sealed).not.toContain('pw-ada');
    const logged = t.logs.join('\n');
    expect(logged).toContain('signing certificate added');
    expect(logged).not.toContain('pw-ada');
    expect(logged).not.toContain(b64(adaP12).slice(0, 40));

    const other = await t.createAccount({ credits: 1 });
    expect((await t.request('GET', '/v1/certificates', { apiKey: other.apiKey })).body.certificates).toEqual([]);
    expect((await t.request('DELETE', '/v1/certificates/ada', { apiKey: other.apiKey })).body.error).toBe(
      'CERTIFICATE_NOT_FOUND',
    );

    const again = await upload({
      name: 'ada',
      pkcs12_base64: b64(kit.pkcs12({ cn: 'Ada Lovelace', password: 'x' })),
      password: 'x',
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('CERTIFICATE_EXISTS');

    expect(
      (await upload({ name: 'temp', pkcs12_base64: b64(kit.pkcs12({ cn: 'Temp', password: 'x' })), password: 'x' }))
        .status,
    ).toBe(201);
    expect((await t.request('DELETE', '/v1/certificates/temp', { apiKey: user.apiKey })).status).toBe(204);
    expect((await t.request('DELETE', '/v1/certificates/temp', { apiKey: user.apiKey })).status).toBe(404);
  });

  it.each([
    [
      'a wrong password',
      () => ({ pkcs12_base64: b64(kit.pkcs12({ cn: 'W', password: 'right' })), password: 'wrong' }),
      'pkcs12_password',
      'password',
    ],
    [
      'an expired certificate',
      () => ({ pkcs12_base64: b64(kit.pkcs12({ cn: 'Old', password: 'x', expired: true })), password: 'x' }),
      'certificate_expired',
      'pkcs12_base64',
    ],
    [
      'a file that is not PKCS#12',
      () => ({ pkcs12_base64: b64(Buffer.from('-----BEGIN CERTIFICATE-----\nnot this\n')), password: 'x' }),
      'pkcs12_invalid',
      'pkcs12_base64',
    ],
    [
      'a key that does not belong to its certificate',
      () => ({ pkcs12_base64: b64(kit.pkcs12({ cn: 'Mixed', password: 'x', mismatched: true })), password: 'x' }),
      'pkcs12_key_mismatch',
      'pkcs12_base64',
    ],
  ])('refuses %s with a 422 naming it, storing nothing', async (_what, body, type, field) => {
    const res = await upload({ name: 'refused', ...body() });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', field], type });
    expect(
      (await t.request('GET', '/v1/certificates', { apiKey: user.apiKey })).body.certificates.map(
        (c: { name: string }) => c.name,
      ),
    ).not.toContain('refused');
  });

  it('signs a PDF (B-B) for one credit: pdfsig finds it valid, by its signer, covering the whole file; /verify says the same for free', async () => {
    const before = await balance();
    const res = await sign({ certificate: 'ada', reason: 'Approved', location: 'Berlin' });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    const report = pdfsig(res.bytes);
    expect(report).toContain('Signer Certificate Common Name: Ada Lovelace');
    expect(report).toContain('Signature Validation: Signature is Valid.');
    expect(report).toContain('Total document signed');
    expect(report).toContain('ETSI.CAdES.detached');
    await settled();
    expect(await balance()).toBe(before - 1);

    const verified = await t.request('POST', '/v1/pdf-tools/verify', {
      apiKey: user.apiKey,
      body: { pdf_base64: b64(res.bytes) },
    });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ signed: true, intact: true, modified_after_signing: false });
    expect(verified.body.signatures[0]).toMatchObject({
      signer: 'Ada Lovelace',
      valid: true,
      covers_whole_document: true,
      timestamp: { present: false, time: null },
    });
    expect(Date.parse(verified.body.signatures[0].signing_time)).not.toBeNaN();
    expect(await balance()).toBe(before - 1);
  });

  it('reports a byte changed after signing, as pdfsig does', async () => {
    const signed = (await sign({ certificate: 'ada' })).bytes;
    const tampered = Buffer.from(signed);
    const at = tampered.indexOf('/MediaBox');
    tampered.write('/MediaBoy', at, 'latin1');
    expect(pdfsig(tampered)).toContain('Digest Mismatch');
    const verified = await t.request('POST', '/v1/pdf-tools/verify', {
      apiKey: user.apiKey,
      body: { pdf_base64: b64(tampered) },
    });
    expect(verified.body).toMatchObject({ signed: true, intact: false, modified_after_signing: true });
    expect(verified.body.signatures[0]).toMatchObject({ valid: false, validation: 'Digest Mismatch' });
  });

  it('time-stamps the signature (B-T) through the TSA: the token verifies with openssl ts -verify, /verify shows its time', async () => {
    const asked = tsa.requests;
    const res = await sign({ certificate: 'ada', timestamp: true });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    expect(tsa.requests).toBe(asked + 1);
    expect(pdfsig(res.bytes)).toContain('Signature is Valid.');
    const token = verifyTimestampToken(res.bytes, tsa);
    expect(token.verification).toContain('Verification: OK');
    // /verify reports the time the TSA put in the token, as OpenSSL reads it from the same token.
    const verified = await t.request('POST', '/v1/pdf-tools/verify', {
      apiKey: user.apiKey,
      body: { pdf_base64: b64(res.bytes) },
    });
    expect(verified.body.signatures[0].timestamp).toEqual({ present: true, time: expect.any(String) });
    expect(Date.parse(verified.body.signatures[0].timestamp.time)).toBe(Date.parse(token.time));
  });

  it.each([
    ['answers garbage', 'garbage'],
    ['never answers', 'hang'],
  ] as const)(
    'fails with TSA_FAILED when the TSA %s, and charges nothing',
    async (_what, mode) => {
      const before = await balance();
      tsa.mode = mode;
      try {
        const res = await sign({ certificate: 'ada', timestamp: true });
        expect(res.status).toBe(502);
        expect(JSON.parse(res.bytes.toString()).error).toBe('TSA_FAILED');
      } finally {
        tsa.mode = 'ok';
      }
      await settled();
      expect(await balance()).toBe(before);
    },
    30_000,
  );

  it('fails with TSA_FAILED when the TSA is down, and charges nothing', async () => {
    const before = await balance();
    const res = await sign({ certificate: 'ada', timestamp: true, tsa_url: 'http://127.0.0.1:9/tsr' });
    expect(res.status).toBe(502);
    expect(JSON.parse(res.bytes.toString()).error).toBe('TSA_FAILED');
    await settled();
    expect(await balance()).toBe(before);
  });

  it.each([
    ['an unknown certificate', { certificate: 'nobody' }, ['body', 'certificate'], 'certificate_not_found'],
    [
      'a visible mark on a page the PDF does not have',
      { certificate: 'ada', visible: { page: 4, x: 10, y: 10, width: 200, height: 50 } },
      ['body', 'visible', 'page'],
      'page_out_of_range',
    ],
  ])('refuses %s with a 422 before the charge', async (_what, body, loc, type) => {
    const before = await balance();
    const res = await sign(body);
    expect(res.status).toBe(422);
    expect(JSON.parse(res.bytes.toString()).detail[0]).toMatchObject({ loc, type });
    expect(await balance()).toBe(before);
  });

  it('draws a visible mark on the page named, covered by the signature', async () => {
    const res = await sign({
      certificate: 'ada',
      reason: 'Approved',
      visible: { page: 2, x: 20, y: 20, width: 250, height: 60 },
    });
    expect(res.status).toBe(200);
    expect(pdfsig(res.bytes)).toContain('Signature is Valid.');
    const text = (page: number) =>
      inTempDir((dir) => {
        writeFileSync(join(dir, 'd.pdf'), res.bytes);
        return execFileSync('pdftotext', ['-f', String(page), '-l', String(page), join(dir, 'd.pdf'), '-'], {
          encoding: 'utf8',
        });
      });
    expect(text(2)).toContain('Digitally signed by Ada Lovelace');
    expect(text(1)).not.toContain('Digitally signed');
  });

  it("signs on create (a PDF/A-2b, time-stamped, as its last change: still PDF/A by the service's own check) and on create-async", async () => {
    const { invoice } = await createTemplates(t, user.apiKey, {
      invoice: { name: 'Signed invoice', html: '<h1>Invoice {{ n }}</h1><p>Total 12.00 EUR</p>' },
    });
    const before = await balance();
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: user.apiKey,
      body: {
        template_id: invoice,
        data: { n: 7 },
        export_type: 'binary',
        pdf_variant: 'pdf/a-2b',
        sign: { certificate: 'ada', reason: 'Issued', timestamp: true },
      },
    });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    expect(pdfsig(res.bytes)).toContain('Signature is Valid.');
    expect(pdfsig(res.bytes)).toContain('Total document signed');
    expect(await checkPdfA(res.bytes, 2)).toEqual([]);
    await settled();
    expect(await balance()).toBe(before - 1);

    // The same on create-async: the job's document is signed by the worker; the certificate is checked before the job is accepted.
    t.services.startWorkers();
    const job = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: user.apiKey,
      body: { template_id: invoice, data: { n: 9 }, sign: { certificate: 'ada', location: 'Berlin' } },
    });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    const jobPdf = await completedJobPdf(t, user.apiKey, job.body.job_id, 60_000);
    expect(pdfsig(jobPdf)).toContain('Signer Certificate Common Name: Ada Lovelace');
    expect(pdfsig(jobPdf)).toContain('Signature is Valid.');
    const refusedJob = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: user.apiKey,
      body: { template_id: invoice, data: { n: 10 }, sign: { certificate: 'nobody' } },
    });
    expect(refusedJob.status).toBe(422);
    await settled();
    expect(await balance()).toBe(before - 2);

    const unknown = await t.request('POST', '/v1/pdf/create', {
      apiKey: user.apiKey,
      body: { template_id: invoice, data: { n: 8 }, sign: { certificate: 'nobody' } },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({
      loc: ['body', 'sign', 'certificate'],
      type: 'certificate_not_found',
    });
    // protect would rewrite the signed bytes: the pair is refused before the charge.
    const both = await t.request('POST', '/v1/pdf/create', {
      apiKey: user.apiKey,
      body: {
        template_id: invoice,
        data: { n: 11 },
        sign: { certificate: 'ada' },
        protect: { owner_password: 'owner-secret-1' },
      },
    });
    expect(both.status).toBe(422);
    expect(both.body.detail[0]).toMatchObject({ loc: ['body', 'protect'], msg: expect.stringContaining('sign') });
    expect(await balance()).toBe(before - 2);
  }, 120_000);
});
