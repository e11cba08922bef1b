/**
 * Issue 49's signing cases over real HTTP (SQLite): hostile certificates and PDFs made here with
 * OpenSSL and @cantoo/pdf-lib, each refused with its reason and for free — a PKCS#12 asking for millions
 * of password-hashing rounds (at upload, and stored before the bound existed), keys too weak or of a
 * kind not accepted, a PDF of 300 fields sharing one 1 MB signature — while `/healthz` answers; a
 * signature past its deadline stopped and refunded; the work on the signing threads, never the event loop.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKey, encryptSecret } from '../../../src/shared/crypto.js';
import { sharedSignaturePdf } from '../../support/documents/hostile-pdfs.js';
import {
  createSigningKit,
  startTsaServer,
  type SigningKit,
  type TsaServer,
} from '../../support/documents/signing-kit.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

/** 2^23 − 1, the most a three-byte DER INTEGER holds: what the file declared. */
const HOSTILE_ROUNDS = '8388607';
const HOSTILE_EXPORT = ['-legacy', '-keypbe', 'PBE-SHA1-3DES', '-certpbe', 'NONE', '-iter', HOSTILE_ROUNDS];

async function contractPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([300, 400]).drawText('Contract', { x: 30, y: 300, size: 18, font });
  return Buffer.from(await doc.save());
}

/** A certificate row as the service wrote one before its checks existed (sealed the same way), for a file uploads now refuse. */
async function storeAsBefore(
  t: TestApp,
  accountId: string,
  name: string,
  p12: Buffer,
  password: string,
): Promise<void> {
  const sealed = encryptSecret(
    deriveKey(t.config.secretKey, 'signing-certificates'),
    JSON.stringify({ p12: p12.toString('base64'), password }),
  );
  const now = Date.now();
  await t.services.database.db
    .insertInto('signing_certificates')
    .values({
      account_id: accountId,
      name,
      subject: 'CN=Stored before',
      issuer: 'CN=Pressroom Test CA',
      serial: '01',
      not_before: now - 86_400_000,
      not_after: now + 30 * 86_400_000,
      fingerprint_sha256: '0'.repeat(64),
      pkcs12_sealed: sealed,
      created_at: now,
    })
    .execute();
}

describe('signing bounds', () => {
  let t: TestApp;
  let kit: SigningKit;
  let user: { accountId: string; apiKey: string };
  let contract: string;
  /** Made once: OpenSSL itself spends seconds on 8,388,607 rounds. */
  let costly: Buffer;
  const b64 = (b: Buffer) => b.toString('base64');
  const ledger = async (apiKey = user.apiKey) => ({
    credits: (await t.request('GET', '/v1/account', { apiKey })).body.credits as number,
    transactions: (
      (await t.request('GET', '/v1/account/transactions?limit=1000', { apiKey })).body.transactions as unknown[]
    ).length,
  });
  const upload = (body: Record<string, unknown>) =>
    t.request('POST', '/v1/certificates', { apiKey: user.apiKey, body });
  const names = async () =>
    ((await t.request('GET', '/v1/certificates', { apiKey: user.apiKey })).body.certificates as { name: string }[]).map(
      (c) => c.name,
    );
  const healthz = () => t.request('GET', '/healthz');

  beforeAll(async () => {
    kit = createSigningKit();
    t = await startTestApp('sqlite');
    user = await t.createAccount({ credits: 20, plan: 'enterprise' });
    contract = b64(await contractPdf());
    costly = kit.pkcs12({ cn: 'Costly', password: 'right', exportArgs: HOSTILE_EXPORT });
  });
  afterAll(async () => {
    await t?.close();
    kit?.close();
  });

  it.each([
    ['a wrong', 'wrong'],
    ['the right', 'right'],
  ])(
    'refuses a PKCS#12 asking for 8,388,607 rounds, with %s password, before hashing any: 422 naming the bound, nothing stored, /healthz answering',
    async (_what, password) => {
      const before = await ledger();
      const [res, health] = await Promise.all([
        upload({ name: 'costly', pkcs12_base64: b64(costly), password }),
        healthz(),
      ]);
      expect(health.status).toBe(200);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'pkcs12_base64'], type: 'pkcs12_too_many_iterations' });
      expect(res.body.detail[0].msg).toContain('8,388,607 rounds');
      expect(res.body.detail[0].msg).toContain('300,000');
      expect(await names()).not.toContain('costly');
      expect(await ledger()).toEqual(before);
    },
    60_000,
  );

  it('opens an upload on a signing thread, in a free slot of the signing pool: /healthz answers while a slow, accepted one is opened', async () => {
    // 300,000 rounds for each of the integrity check, the certificates and the key (3DES and RC2): seconds of hashing, within the bounds.
    const p12 = kit.pkcs12({ cn: 'Slow but fine', password: 'pw', exportArgs: ['-legacy', '-iter', '300000'] });
    const pending = upload({ name: 'slow', pkcs12_base64: b64(p12), password: 'pw' });
    // The pool's own gauge says the check holds a signing slot; /metrics and /healthz answering meanwhile is the event loop free.
    await until(
      async () =>
        /pressroom_pool_active\{pool="signing"\} 1\b/.test((await t.request('GET', '/metrics')).body as string),
      20_000,
      'the upload in a signing slot',
    );
    expect((await healthz()).status).toBe(200);
    const res = await pending;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.subject).toBe('CN=Slow but fine, O=Pressroom Test');
  }, 60_000);

  it('refuses, before the charge, a signature with a certificate stored before the bound that asks for 8,388,607 rounds', async () => {
    await storeAsBefore(t, user.accountId, 'stored-costly', costly, 'right');
    const before = await ledger();
    const [res, health] = await Promise.all([
      t.request('POST', '/v1/pdf-tools/sign', {
        apiKey: user.apiKey,
        body: { pdf_base64: contract, certificate: 'stored-costly' },
      }),
      healthz(),
    ]);
    expect(health.status).toBe(200);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'certificate'], type: 'pkcs12_too_many_iterations' });
    expect(res.body.detail[0].msg).toContain('Certificate "stored-costly"');
    expect(await ledger()).toEqual(before);
  }, 60_000);

  it.each([
    ['RSA of 512 bits', ['-newkey', 'rsa:512'], 'key_too_weak', 'RSA of 512 bits'],
    ['RSA of 1024 bits', ['-newkey', 'rsa:1024'], 'key_too_weak', 'RSA of 1024 bits'],
    ['EC on secp256k1', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:secp256k1'], 'key_unsupported', 'secp256k1'],
    [
      'EC on brainpoolP256r1',
      ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:brainpoolP256r1'],
      'key_unsupported',
      'elliptic curve',
    ],
    ['Ed25519', ['-newkey', 'ed25519'], 'key_unsupported', 'Ed25519'],
  ])('refuses a key of %s: 422 naming it, nothing stored', async (_what, key, type, named) => {
    const before = await ledger();
    const res = await upload({
      name: 'weak',
      pkcs12_base64: b64(kit.pkcs12({ cn: 'Weak', password: 'pw', key })),
      password: 'pw',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'pkcs12_base64'], type });
    expect(res.body.detail[0].msg).toContain(named);
    expect(await names()).not.toContain('weak');
    expect(await ledger()).toEqual(before);
  });

  it('accepts RSA-2048 and EC on P-256, P-384 and P-521, and signs with P-384 (pdfsig: valid)', async () => {
    for (const curve of ['prime256v1', 'secp384r1', 'secp521r1']) {
      const res = await upload({
        name: `ec-${curve}`,
        pkcs12_base64: b64(
          kit.pkcs12({ cn: 'Curve', password: 'pw', key: ['-newkey', 'ec', '-pkeyopt', `ec_paramgen_curve:${curve}`] }),
        ),
        password: 'pw',
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const signed = await t.request('POST', '/v1/pdf-tools/sign', {
      apiKey: user.apiKey,
      body: { pdf_base64: contract, certificate: 'ec-secp384r1', export_type: 'binary' },
    });
    expect(signed.status).toBe(200);
    const report = await t.request('POST', '/v1/pdf-tools/verify', {
      apiKey: user.apiKey,
      body: { pdf_base64: b64(signed.bytes) },
    });
    expect(report.body).toMatchObject({ signed: true, intact: true });
  });

  it('signs with a certificate of 1,500 names (34 KB), more than the space a signature had reserved: pdfsig finds it valid', async () => {
    const names = Array.from({ length: 1500 }, (_, i) => `DNS:host${i}.example.com`).join(',');
    const added = await upload({
      name: 'many-names',
      pkcs12_base64: b64(kit.pkcs12({ cn: 'Many names', password: 'pw', extension: `subjectAltName=${names}` })),
      password: 'pw',
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const signed = await t.request('POST', '/v1/pdf-tools/sign', {
      apiKey: user.apiKey,
      body: { pdf_base64: contract, certificate: 'many-names', export_type: 'binary' },
    });
    expect(signed.status, signed.bytes.toString().slice(0, 300)).toBe(200);
    const report = await t.request('POST', '/v1/pdf-tools/verify', {
      apiKey: user.apiKey,
      body: { pdf_base64: b64(signed.bytes) },
    });
    expect(report.body).toMatchObject({ signed: true, intact: true });
  });

  it('refuses a signature with an RSA-512 key stored before keys were checked: 422 naming it, refunded', async () => {
    await storeAsBefore(
      t,
      user.accountId,
      'stored-weak',
      kit.pkcs12({ cn: 'Weak', password: 'pw', key: ['-newkey', 'rsa:512'] }),
      'pw',
    );
    const before = (await ledger()).credits;
    const res = await t.request('POST', '/v1/pdf-tools/sign', {
      apiKey: user.apiKey,
      body: { pdf_base64: contract, certificate: 'stored-weak' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'certificate'], type: 'key_too_weak' });
    expect((await ledger()).credits).toBe(before);
  });

  it.each([
    ['300 fields sharing one 1 MB signature: refused by count before any pdfsig run', 300, 'too_many_signatures'],
    ["60 fields sharing one 1 MB signature: stopped by the dump's file ceiling", 60, 'PDF_TOO_COMPLEX'],
  ])(
    'bounds a free check of %s; free, temp files removed, /healthz answering',
    async (_what, fields, refusal) => {
      const hostile = await sharedSignaturePdf(fields, 1 << 20);
      // The check's temporary files go to a directory of this test's own, so other work on the machine cannot blur what is left.
      const tmp = mkdtempSync(join(tmpdir(), 'signing-bounds-tmp-'));
      const previous = process.env.TMPDIR;
      process.env.TMPDIR = tmp;
      const before = await ledger();
      try {
        const [res, health] = await Promise.all([
          t.request('POST', '/v1/pdf-tools/verify', { apiKey: user.apiKey, body: { pdf_base64: b64(hostile) } }),
          healthz(),
        ]);
        expect(health.status).toBe(200);
        expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(422);
        if (refusal === 'too_many_signatures')
          expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'pdf_base64'], type: 'too_many_signatures' });
        else expect(res.body.error).toBe(refusal);
        expect(readdirSync(tmp).filter((name) => name.startsWith('pressroom-'))).toEqual([]);
      } finally {
        if (previous === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = previous;
        rmSync(tmp, { recursive: true, force: true });
      }
      expect(await ledger()).toEqual(before);
    },
    60_000,
  );
});

describe('a signature past its deadline', () => {
  let t: TestApp;
  let kit: SigningKit;
  let tsa: TsaServer;
  let user: { accountId: string; apiKey: string };

  beforeAll(async () => {
    kit = createSigningKit();
    tsa = await startTsaServer();
    // An 8 s deadline, under the time-stamp authority's own 10 s: a TSA that never answers holds the thread until the deadline ends it.
    t = await startTestApp('sqlite', { PRESSROOM_TSA_URL: tsa.url }, { tuning: { signing: { timeoutMs: 8_000 } } });
    user = await t.createAccount({ credits: 5, plan: 'enterprise' });
    // Stored as an upload would store it, without a task on the threads whose deadline this app shortens.
    await storeAsBefore(t, user.accountId, 'ada', kit.pkcs12({ cn: 'Ada', password: 'pw' }), 'pw');
  });
  afterAll(async () => {
    await t?.close();
    await tsa?.close();
    kit?.close();
  });

  it('is stopped with SIGNING_TIMEOUT and refunded; /healthz answers meanwhile, and the next signature gets a fresh thread', async () => {
    const contract = (await contractPdf()).toString('base64');
    const credits = async () => (await t.request('GET', '/v1/account', { apiKey: user.apiKey })).body.credits as number;
    const before = await credits();
    tsa.mode = 'hang';
    try {
      const [res, health] = await Promise.all([
        t.request('POST', '/v1/pdf-tools/sign', {
          apiKey: user.apiKey,
          body: { pdf_base64: contract, certificate: 'ada', timestamp: true },
        }),
        t.request('GET', '/healthz'),
      ]);
      expect(health.status).toBe(200);
      expect(res.status, JSON.stringify(res.body)).toBe(504);
      expect(res.body).toMatchObject({
        error: 'SIGNING_TIMEOUT',
        message: expect.stringContaining('nothing was charged'),
      });
    } finally {
      tsa.mode = 'ok';
    }
    await expect.poll(credits).toBe(before);
    const transactions = (await t.request('GET', '/v1/account/transactions?limit=10', { apiKey: user.apiKey })).body
      .transactions as { transaction_type: string }[];
    expect(
      transactions
        .slice(0, 2)
        .map((x) => x.transaction_type)
        .sort(),
    ).toEqual(['PDFGEN', 'REFUND']);
    const next = await t.request('POST', '/v1/pdf-tools/sign', {
      apiKey: user.apiKey,
      body: { pdf_base64: contract, certificate: 'ada' },
    });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
  }, 60_000);
});
