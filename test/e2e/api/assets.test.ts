/**
 * The asset library over real HTTP on SQLite and PostgreSQL, and warnings through the API (issue 13):
 * upload (JSON and multipart), list, download, replace, delete; names and types refused in the
 * documented shape with nothing stored; another account sees nothing; a document using an asset
 * prints it (real Chromium), a missing one is a warning in the JSON answer, in the binary answer's
 * headers, on the job and in its webhook payload. The account quota is exact under concurrent
 * uploads (issue 37), and access tokens do not reach the library.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../support/cluster.js';
import { DIALECTS } from '../../support/databases.js';
import { pdfTool } from '../../support/documents/pdf-tools.js';
import { ADMIN_TOKEN, startTestApp, until, type TestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC',
  'base64',
);

describe.each(DIALECTS)('assets on %s', (dialect) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let alice: { accountId: string; apiKey: string };
  let bob: { accountId: string; apiKey: string };

  const upload = (body: unknown, apiKey = alice.apiKey) => t.request('POST', '/v1/assets', { apiKey, body });
  const list = async (apiKey = alice.apiKey) =>
    (await t.request('GET', '/v1/assets', { apiKey })).body.assets as { name: string }[];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp(dialect, { PRESSROOM_JOB_POLL_MS: '100', PRESSROOM_ALLOW_PRIVATE_NETWORKS: 'true' });
    alice = await t.createAccount({ credits: 20, plan: 'enterprise' });
    bob = await t.createAccount({ credits: 20, plan: 'enterprise' });
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('uploads (JSON and multipart), lists, downloads, replaces and deletes; other accounts see nothing', async () => {
    const created = await upload({ name: 'brand/logo.png', content_base64: PNG.toString('base64') });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({
      name: 'brand/logo.png',
      content_type: 'image/png',
      size: PNG.length,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      created_at: expect.stringMatching(/^\d{4}-/),
      updated_at: expect.stringMatching(/^\d{4}-/),
      revision: 1,
      replaced: false,
      used_by: [],
    });

    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(Buffer.from('p { color: red; }'))], { type: 'text/css' }), 'site.css');
    const multipart = await fetch(`${t.baseUrl}/v1/assets`, {
      method: 'POST',
      headers: { 'x-api-key': alice.apiKey },
      body: form,
    });
    expect(multipart.status, await multipart.clone().text()).toBe(201);
    expect(await multipart.json()).toMatchObject({ name: 'site.css', content_type: 'text/css' });

    expect((await list()).map((a) => a.name)).toEqual(['brand/logo.png', 'site.css']);
    const download = await t.request('GET', '/v1/assets/brand/logo.png', { apiKey: alice.apiKey });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(download.bytes.equals(PNG)).toBe(true);

    // Bob: nothing listed, nothing by name, nothing to delete.
    expect(await list(bob.apiKey)).toEqual([]);
    expect((await t.request('GET', '/v1/assets/brand/logo.png', { apiKey: bob.apiKey })).status).toBe(404);
    expect((await t.request('DELETE', '/v1/assets/brand/logo.png', { apiKey: bob.apiKey })).status).toBe(404);

    // Uploading the name again keeps the name and created_at, and says so (issue 50).
    const replaced = await upload({
      name: 'site.css',
      content_base64: Buffer.from('body { margin: 0 }').toString('base64'),
    });
    expect(replaced.status).toBe(201);
    expect(replaced.body).toMatchObject({
      size: 'body { margin: 0 }'.length,
      revision: 2,
      replaced: true,
      used_by: [],
    });
    expect((await list()).length).toBe(2);

    expect((await t.request('DELETE', '/v1/assets/site.css', { apiKey: alice.apiKey })).body).toEqual({
      success: true,
    });
    expect((await t.request('GET', '/v1/assets/site.css', { apiKey: alice.apiKey })).body.error).toBe('NOT_FOUND');
    expect((await list()).map((a) => a.name)).toEqual(['brand/logo.png']);
  });

  it('refuses access tokens: the library takes the API key only (issue 37)', async () => {
    const issued = await t.request('POST', `/v1/admin/accounts/${alice.accountId}/access-tokens`, {
      bearer: ADMIN_TOKEN,
      body: { ttl_seconds: 120 },
    });
    expect(issued.status).toBe(201);
    const token = issued.body.access_token as string;
    expect((await t.request('GET', '/v1/account', { bearer: token })).status).toBe(200);
    for (const path of ['/v1/assets', '/v1/assets/brand/logo.png']) {
      const res = await t.request('GET', path, { bearer: token });
      expect(res.status, path).toBe(401);
      expect(res.body).toEqual({
        error: 'UNAUTHORIZED',
        message: expect.stringContaining('access tokens are accepted only on GET /v1/templates,'),
      });
      expect((await t.request('GET', path, { apiKey: alice.apiKey })).status, path).toBe(200);
    }
  });

  it('refuses bad names and types (422) and stores nothing', async () => {
    for (const name of ['', '/abs.png', 'a/../b.png', 'a//b.png', 'sp ace.png', 'x'.repeat(201), 'trailing/']) {
      const res = await upload({ name, content_base64: PNG.toString('base64') }, bob.apiKey);
      expect(res.status, name).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'name']);
    }
    for (const bytes of [
      Buffer.from('<html><body>hi</body></html>'),
      Buffer.from('%PDF-1.7\n'),
      Buffer.from([0, 1, 2, 3, 4, 5]),
    ]) {
      const res = await upload({ name: 'logo.png', content_base64: bytes.toString('base64') }, bob.apiKey);
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'content_base64']);
    }
    expect(await list(bob.apiKey)).toEqual([]);
  });

  it('prints an asset, and answers a missing one as a warning: JSON, binary headers, job and webhook', async () => {
    const html = `<p>Invoice</p><img src="{{ asset('brand/logo.png') }}" width="32"><img src="{{ asset('missing.png') }}">`;
    const id = (await t.request('POST', '/v1/templates', { apiKey: alice.apiKey, body: { name: 'Logo', html } })).body
      .id as string;
    const expected = [
      {
        code: 'ASSET_NOT_FOUND',
        message: expect.stringContaining('"missing.png"'),
        url: 'https://assets.pressroom.internal/a/missing.png',
      },
    ];

    const json = await t.request('POST', '/v1/pdf/create', {
      apiKey: alice.apiKey,
      body: { template_id: id, data: {} },
    });
    expect(json.status, JSON.stringify(json.body)).toBe(200);
    expect(json.body.warnings).toEqual(expected);

    const binary = await t.request('POST', '/v1/pdf/create', {
      apiKey: alice.apiKey,
      body: { template_id: id, data: {}, export_type: 'binary' },
    });
    expect(binary.status).toBe(200);
    expect(binary.headers.get('x-pressroom-warnings')).toBe('1');
    expect(JSON.parse(binary.headers.get('x-pressroom-warning-details')!)).toEqual(expected);
    const logos = pdfTool('pdfimages', binary.bytes, ['-list'])
      .split('\n')
      .filter((row) => /^\s*1\s+\d+\s+image\s+1\s+1\s/.test(row));
    expect(logos).toHaveLength(1);

    const preview = await t.request('POST', '/v1/templates/preview', { apiKey: alice.apiKey, body: { html } });
    expect(preview.status).toBe(200);
    expect(preview.headers.get('x-pressroom-warnings')).toBe('1');

    // Bob's document naming the same asset gets nothing but the warning.
    const bobs = (await t.request('POST', '/v1/templates', { apiKey: bob.apiKey, body: { name: 'Logo', html } })).body
      .id as string;
    const bobJson = await t.request('POST', '/v1/pdf/create', {
      apiKey: bob.apiKey,
      body: { template_id: bobs, data: {} },
    });
    expect(bobJson.body.warnings.map((w: { url: string }) => w.url)).toEqual([
      'https://assets.pressroom.internal/a/brand/logo.png',
      'https://assets.pressroom.internal/a/missing.png',
    ]);

    const queued = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: alice.apiKey,
      body: { template_id: id, data: {}, webhook_url: `${receiver.url}/hook` },
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    const jobId = queued.body.job_id as string;
    t.services.startWorkers();
    const job = await until(
      async () => {
        const res = await t.request('GET', `/v1/pdf/jobs/${jobId}`, { apiKey: alice.apiKey });
        return res.body.status === 'completed' ? res.body : undefined;
      },
      120_000,
      'the job to complete',
    );
    expect(job.warnings).toEqual(expected);
    const [hook] = await receiver.waitFor(1, undefined, 120_000);
    expect(hook!.json.warnings).toEqual(expected);
  });
});

/** Issue 37, case 5: twenty uploads at once once stored 4.6 MiB against a 1 MiB quota. */
describe.each(DIALECTS)('the account quota under concurrent uploads on %s', (dialect) => {
  const QUOTA = 1024 * 1024;
  const SIZE = 250 * 1024;
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(
      dialect,
      { PRESSROOM_ASSET_ACCOUNT_MAX_BYTES: String(QUOTA) },
      { tuning: { assets: { maxBytes: 256 * 1024 } } },
    );
  }, 180_000);
  afterAll(async () => t?.close());

  /** A 250 KiB file the library takes for a PNG (the magic bytes, then noise), uploaded as multipart (the way). */
  const upload = async (apiKey: string, name: string) => {
    const form = new FormData();
    form.append(
      'file',
      new Blob([new Uint8Array(Buffer.concat([PNG.subarray(0, 8), randomBytes(SIZE - 8)]))], { type: 'image/png' }),
      name,
    );
    const res = await fetch(`${t.baseUrl}/v1/assets`, { method: 'POST', headers: { 'x-api-key': apiKey }, body: form });
    return { status: res.status, body: await res.json() };
  };
  const storedFiles = (accountId: string) => {
    const dir = join(t.database.dataDir, 'files', 'assets', accountId);
    return existsSync(dir) ? readdirSync(dir).length : 0;
  };

  it('twenty 250 KiB uploads at once: four stored, exactly within the 1 MiB quota; the rest 413, storing and charging nothing', async () => {
    const account = await t.createAccount({ credits: 5, plan: 'enterprise' });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => upload(account.apiKey, `logo-${i}.png`)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, `statuses ${statuses.join(',')}`).toEqual([...Array(4).fill(201), ...Array(16).fill(413)]);
    for (const refused of answers.filter((a) => a.status === 413)) {
      expect(refused.body).toEqual({
        error: 'PAYLOAD_TOO_LARGE',
        message: expect.stringContaining('the limit is 1048576 bytes (1 MiB, PRESSROOM_ASSET_ACCOUNT_MAX_BYTES)'),
      });
    }
    const listed = (await t.request('GET', '/v1/assets', { apiKey: account.apiKey })).body.assets as {
      name: string;
      size: number;
    }[];
    expect(listed).toHaveLength(4);
    expect(listed.reduce((sum, a) => sum + a.size, 0)).toBe(4 * SIZE);
    expect(storedFiles(account.accountId)).toBe(4);
    expect((await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits).toBe(5);

    // A replacement is counted without the file it replaces: it still fits.
    const again = await upload(account.apiKey, listed[0]!.name);
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(storedFiles(account.accountId)).toBe(4);
  });
});

/** The same across processes: two `serve` processes on one database and one store, ten uploads each at once. */
describe.each(DIALECTS)('the account quota across two service processes on %s', (dialect) => {
  const QUOTA = 1024 * 1024;
  const SIZE = 250 * 1024;
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster({
      alls: 2,
      database: dialect,
      storage: 'local',
      env: { PRESSROOM_ASSET_ACCOUNT_MAX_BYTES: String(QUOTA), PRESSROOM_RENDER_CONCURRENCY: '1' },
    });
  }, 240_000);
  afterAll(async () => cluster?.close());

  it('twenty 250 KiB uploads split over both processes: four stored, the rest 413', async () => {
    const account = await cluster.createAccount({ credits: 5, plan: 'enterprise' });
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const form = new FormData();
        form.append(
          'file',
          new Blob([new Uint8Array(Buffer.concat([PNG.subarray(0, 8), randomBytes(SIZE - 8)]))], { type: 'image/png' }),
          `logo-${i}.png`,
        );
        const res = await fetch(`${cluster.alls[i % 2]!.baseUrl}/v1/assets`, {
          method: 'POST',
          headers: { 'x-api-key': account.apiKey },
          body: form,
        });
        return res.status;
      }),
    );
    expect(answers.sort(), `statuses ${answers.join(',')}`).toEqual([...Array(4).fill(201), ...Array(16).fill(413)]);
    const listed = (await cluster.alls[1]!.request('GET', '/v1/assets', { apiKey: account.apiKey })).body.assets as {
      size: number;
    }[];
    expect(listed.reduce((sum, a) => sum + a.size, 0)).toBe(4 * SIZE);
    const dir = join(fileURLToPath(cluster.env.PRESSROOM_STORAGE_URL!), 'assets', account.accountId);
    expect(readdirSync(dir)).toHaveLength(4);
  });
});
