/**
 * Customer S3 storage against a real S3-compatible server on loopback that verifies SigV4 signatures
 * and checksums, on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startS3Server, type S3Server } from '../../support/s3-server.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

const ACCESS_KEY = 'AKIAPRESSROOMTEST01';
const SECRET = 'pressroom-test-secret-key-0123456789ABCDEF';

describe.each(DIALECTS)('S3 integration on %s', (dialect) => {
  let s3: S3Server;
  let t: TestApp;
  let account: { accountId: string; apiKey: string };
  let templateId: string;

  const settings = (overrides: Record<string, unknown> = {}) => ({
    endpoint_url: s3.endpoint,
    access_key_id: ACCESS_KEY,
    secret_access_key: SECRET,
    bucket_name: 'customer-pdfs',
    default_prefix: 'invoices/2026',
    ...overrides,
  });
  const api = (method: string, path: string, body?: unknown, apiKey = account.apiKey) =>
    t.request(method, path, { apiKey, body });
  const balance = async () => (await api('GET', '/v1/account')).body.credits as number;

  beforeAll(async () => {
    s3 = await startS3Server({
      accessKeyId: ACCESS_KEY,
      secretAccessKey: SECRET,
      buckets: ['customer-pdfs', 'other-bucket'],
    });
    t = await startTestApp(dialect, {}, { captureLogs: true });
    account = await t.createAccount({ credits: 20, plan: 'enterprise' });
    templateId = (
      await api('POST', '/v1/templates', { name: 'S3 doc', html: '<p>Order {{ order }} for {{ who }}</p>' })
    ).body.id;
  });
  afterAll(async () => {
    await t?.close();
    await s3?.stop();
  });

  it('answers 404 S3_NOT_CONFIGURED before a configuration exists, and refuses a new one without a secret', async () => {
    const none = await api('GET', '/v1/integrations/s3');
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('S3_NOT_CONFIGURED');
    const noSecret = await api('POST', '/v1/integrations/s3', settings({ secret_access_key: undefined }));
    expect(noSecret.status).toBe(400);
    expect(noSecret.body).toEqual({ detail: expect.stringContaining('secret_access_key') });
    const test = await api('POST', '/v1/integrations/s3/test');
    expect(test.status).toBe(400);
    expect(test.body.detail).toMatch(/not configured/i);
    const store = await api('POST', '/v1/pdf/create', { template_id: templateId, data: {}, store_s3: true });
    expect(store.status).toBe(400);
    expect(store.body.error).toBe('INVALID_REQUEST');
  });

  it('validates the configuration as the spec says', async () => {
    const res = await api(
      'POST',
      '/v1/integrations/s3',
      settings({
        endpoint_url: 'short',
        access_key_id: 'tiny',
        secret_access_key: 'x',
        bucket_name: 'Bad_Bucket',
        default_prefix: 'a b',
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: string[] }) => d.loc.join('.')).sort()).toEqual(
      [
        'body.access_key_id',
        'body.bucket_name',
        'body.default_prefix',
        'body.endpoint_url',
        'body.secret_access_key',
      ].sort(),
    );
    const traversal = await api('POST', '/v1/integrations/s3', settings({ default_prefix: '../escape' }));
    expect(traversal.status).toBe(422);
    expect(traversal.body.detail[0].loc).toEqual(['body', 'default_prefix']);
  });

  it('stores the secret encrypted and shows it masked, never in a response or a log line', async () => {
    expect((await api('POST', '/v1/integrations/s3', settings())).body).toEqual({ success: true });
    const read = await api('GET', '/v1/integrations/s3');
    expect(read.body).toEqual({
      configured: true,
      endpoint_url: s3.endpoint,
      access_key_id: ACCESS_KEY,
      secret_access_key_masked: 'pres…CDEF',
      bucket_name: 'customer-pdfs',
      default_prefix: 'invoices/2026',
    });
    const row = await t.services.database.db.selectFrom('s3_integrations').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(SECRET);
    expect(row.secret_access_key_sealed).toMatch(/^v1\./);

    // An update without a secret keeps the stored one.
    expect(
      (
        await api(
          'POST',
          '/v1/integrations/s3',
          settings({ secret_access_key: undefined, default_prefix: 'invoices/2026/' }),
        )
      ).status,
    ).toBe(200);
    expect((await api('POST', '/v1/integrations/s3/test')).body.success).toBe(true);
  });

  it('tests the connection with a real round trip', async () => {
    const ok = await api('POST', '/v1/integrations/s3/test');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true, message: expect.stringContaining('customer-pdfs') });
    expect(s3.requests.some((r) => r.method === 'PUT' && r.path.includes('.pressroom-connection-test-'))).toBe(true);
    expect(s3.requests.some((r) => r.method === 'DELETE' && r.path.includes('.pressroom-connection-test-'))).toBe(true);
  });

  it('gives wrong keys, a wrong secret and a wrong bucket each their own 400 detail', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ access_key_id: 'AKIAUNKNOWNKEY000001' }, /access denied/i],
      [{ secret_access_key: 'a-wrong-secret-0123456789' }, /access denied/i],
      [{ bucket_name: 'no-such-bucket' }, /bucket not found/i],
      [{ endpoint_url: 'http://127.0.0.1:1' }, /unreachable/i],
    ];
    const details = [];
    for (const [override, pattern] of cases) {
      await api('POST', '/v1/integrations/s3', settings(override));
      const res = await api('POST', '/v1/integrations/s3/test');
      expect(res.status, JSON.stringify(override)).toBe(400);
      expect(res.body.detail).toMatch(pattern);
      expect(res.body.detail).not.toContain(SECRET);
      details.push(res.body.detail);
    }
    expect(details[0]).not.toBe(details[2]);
    await api('POST', '/v1/integrations/s3', settings());
  });

  it('uploads the PDF to the bucket under the prefix, keeping no copy on the default storage', async () => {
    const files = async () =>
      Number(
        (
          await t.services.database.db
            .selectFrom('files')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await files();
    const credits = await balance();
    const res = await api('POST', '/v1/pdf/create', {
      template_id: templateId,
      data: { order: 'A-17', who: 'Grace' },
      store_s3: true,
      filename: 'order-A-17',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      s3_bucket: 'customer-pdfs',
      s3_key: 'invoices/2026/order-A-17.pdf',
      filename: 'order-A-17.pdf',
      credits_remaining: credits - 1,
    });
    const stored = await s3.readObject('customer-pdfs', 'invoices/2026/order-A-17.pdf');
    expect(stored).not.toBeNull();
    expect(pdfText(stored!)).toContain('Order A-17 for Grace');
    const put = s3.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/order-A-17.pdf')).at(-1)!;
    expect(put.status).toBe(200);
    expect(await files()).toBe(before);

    const custom = await api('POST', '/v1/pdf/create', {
      template_id: templateId,
      data: { order: 'B', who: 'Alan' },
      store_s3: true,
      s3_filepath: 'custom/path',
      s3_bucket: 'other-bucket',
    });
    expect(custom.body).toMatchObject({ s3_bucket: 'other-bucket', s3_key: 'custom/path/document.pdf' });
    expect(pdfText((await s3.readObject('other-bucket', 'custom/path/document.pdf'))!)).toContain('Order B for Alan');
  });

  it('treats an upload failure as a failed generation: clear error, credit refunded', async () => {
    const credits = await balance();
    const res = await api('POST', '/v1/pdf/create', {
      template_id: templateId,
      data: { order: 'X', who: 'Y' },
      store_s3: true,
      s3_bucket: 'missing-bucket',
    });
    expect(res.status).toBe(502);
    expect(res.body.error).toBe('S3_UPLOAD_FAILED');
    expect(res.body.message).toMatch(/bucket not found/i);
    expect(await balance()).toBe(credits);
  });

  it('never writes the secret to a log line', () => {
    expect(t.logs.length).toBeGreaterThan(0);
    expect(t.logs.join('\n')).not.toContain(SECRET);
  });

  it('goes back to the default storage after DELETE', async () => {
    expect((await api('DELETE', '/v1/integrations/s3')).body).toEqual({ success: true });
    expect((await api('GET', '/v1/integrations/s3')).status).toBe(404);
    expect(await t.services.database.db.selectFrom('s3_integrations').selectAll().execute()).toEqual([]);
    const res = await api('POST', '/v1/pdf/create', { template_id: templateId, data: { order: 'C', who: 'Edsger' } });
    expect(res.status).toBe(200);
    const link = new URL(res.body.url);
    expect(pdfText((await t.request('GET', `${link.pathname}${link.search}`)).bytes)).toContain('Order C for Edsger');
    expect((await api('POST', '/v1/pdf/create', { template_id: templateId, data: {}, store_s3: true })).status).toBe(
      400,
    );
  });
});

describe('S3 endpoints and private networks', () => {
  it('refuses a private endpoint at save when private networks are not allowed', async () => {
    const t = await startTestApp('sqlite', { PRESSROOM_ALLOW_PRIVATE_NETWORKS: 'false' });
    try {
      const { apiKey } = await t.createAccount({});
      for (const endpoint of [
        'http://s3.example.com',
        'https://127.0.0.1:9000',
        'https://[::1]:9000',
        'https://169.254.169.254',
        'https://localhost:9000',
      ]) {
        const res = await t.request('POST', '/v1/integrations/s3', {
          apiKey,
          body: { endpoint_url: endpoint, access_key_id: ACCESS_KEY, secret_access_key: SECRET, bucket_name: 'bucket' },
        });
        expect(res.status, endpoint).toBe(422);
        expect(res.body.detail[0].loc).toEqual(['body', 'endpoint_url']);
      }
      expect(await t.services.database.db.selectFrom('s3_integrations').selectAll().execute()).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
