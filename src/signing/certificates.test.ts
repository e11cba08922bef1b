/**
 * The certificate store on real SQLite and PostgreSQL: a certificate per account and name (a second of
 * one name is 409 CERTIFICATE_EXISTS, the same name in another account is its own), sealed at rest (the
 * row holds neither the password nor the file's bytes in the clear), opened again to a signer of the
 * same certificate, and an account deleted takes its certificates with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { createLogger } from '../shared/log.js';
import { isAppError } from '../shared/errors.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../test/support/databases.js';
import { TEST_PG_URL } from '../../test/support/global-setup.js';
import { createSigningKit, type SigningKit } from '../../test/support/documents/signing-kit.js';
import { createCertificateService, type CertificateService } from './certificates.js';
import { certificateFacts, openPkcs12 } from './pkcs12.js';
import { createSigningPool } from './signing-pool.js';

describe.each(DIALECTS)('signing certificates on %s', (dialect) => {
  let testDb: TestDatabase;
  let database: DatabaseHandle;
  let kit: SigningKit;
  let certificates: CertificateService;
  let p12: Buffer;
  const pool = createSigningPool({ slots: 2, timeoutMs: 60_000, maxWaitMs: 60_000 });

  beforeAll(async () => {
    kit = createSigningKit();
    p12 = kit.pkcs12({ cn: 'Grace Hopper', password: 'sesame' });
    testDb = await createTestDatabase(dialect);
    database = await openDatabase({
      dialect,
      url: dialect === 'postgres' ? TEST_PG_URL : undefined,
      sqlitePath: `${testDb.dataDir}/c.db`,
      pgSchema: testDb.pgSchema,
    });
    for (const id of ['acc_a', 'acc_b']) {
      await database.db
        .insertInto('accounts')
        .values({
          id,
          email: null,
          plan: 'pro',
          credits: 0,
          rate_limit_per_minute: null,
          rate_limit_per_day: null,
          created_at: 0,
        })
        .execute();
    }
    certificates = createCertificateService({
      db: database.db,
      secretKey: 'test-secret-key-0123456789abcdef0123456789abcdef',
      logger: createLogger('silent'),
      pool,
    });
  });
  afterAll(async () => {
    await pool.close();
    await database?.close();
    await testDb?.dispose();
    kit?.close();
  });

  it('keeps one certificate per account and name, sealed, and opens it again to the same certificate', async () => {
    const added = await certificates.add('acc_a', {
      name: 'seal',
      pkcs12Base64: p12.toString('base64'),
      password: 'sesame',
    });
    expect(added).toMatchObject({ name: 'seal', subject: 'CN=Grace Hopper, O=Pressroom Test' });
    const again = await certificates
      .add('acc_a', { name: 'seal', pkcs12Base64: p12.toString('base64'), password: 'sesame' })
      .catch((error: unknown) => error);
    expect(isAppError(again, 'CERTIFICATE_EXISTS')).toBe(true);
    await certificates.add('acc_b', { name: 'seal', pkcs12Base64: p12.toString('base64'), password: 'sesame' });
    expect((await certificates.list('acc_a')).map((c) => c.name)).toEqual(['seal']);

    const row = await database.db
      .selectFrom('signing_certificates')
      .selectAll()
      .where('account_id', '=', 'acc_a')
      .executeTakeFirstOrThrow();
    expect(row.pkcs12_sealed).not.toContain('sesame');
    expect(row.pkcs12_sealed).not.toContain(p12.toString('base64').slice(0, 40));
    // The row keeps the certificate's own validity end, as the answer states it.
    expect(Number(row.not_after)).toBe(Date.parse(added.not_after));

    const sealed = await certificates.open('acc_a', 'seal', ['body', 'certificate']);
    const signer = await openPkcs12(sealed.p12, sealed.password);
    expect(certificateFacts(signer.certificate).fingerprintSha256).toBe(added.fingerprint_sha256);

    await certificates.remove('acc_a', 'seal');
    expect(await certificates.list('acc_a')).toEqual([]);
    expect((await certificates.list('acc_b')).length).toBe(1);
    await database.db.deleteFrom('accounts').where('id', '=', 'acc_b').execute();
    expect(await database.db.selectFrom('signing_certificates').selectAll().execute()).toEqual([]);
  });
});
