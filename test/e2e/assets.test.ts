/**
 * The asset library over real HTTP on SQLite and PostgreSQL, and warnings through the API (issue 13):
 * upload (JSON and multipart), list, download, replace, delete; names and types refused in the
 * documented shape with nothing stored; another account sees nothing; a document using an asset
 * prints it (real Chromium), a missing one is a warning in the JSON answer, in the binary answer's
 * headers, on the job and in its webhook payload.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/databases.js';
import { pdfTool } from '../support/pdf-tools.js';
import { startTestApp, until, type TestApp } from '../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64');

describe.each(DIALECTS)('assets on %s', (dialect) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let alice: { accountId: string; apiKey: string };
  let bob: { accountId: string; apiKey: string };

  const upload = (body: unknown, apiKey = alice.apiKey) => t.request('POST', '/v1/assets', { apiKey, body });
  const list = async (apiKey = alice.apiKey) => (await t.request('GET', '/v1/assets', { apiKey })).body.assets as { name: string }[];

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
    });

    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(Buffer.from('p { color: red; }'))], { type: 'text/css' }), 'site.css');
    const multipart = await fetch(`${t.baseUrl}/v1/assets`, { method: 'POST', headers: { 'x-api-key': alice.apiKey }, body: form });
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

    // Replacing keeps the name and created_at.
    const replaced = await upload({ name: 'site.css', content_base64: Buffer.from('body { margin: 0 }').toString('base64') });
    expect(replaced.status).toBe(201);
    expect(replaced.body.size).toBe('body { margin: 0 }'.length);
    expect((await list()).length).toBe(2);

    expect((await t.request('DELETE', '/v1/assets/site.css', { apiKey: alice.apiKey })).body).toEqual({ success: true });
    expect((await t.request('GET', '/v1/assets/site.css', { apiKey: alice.apiKey })).body.error).toBe('NOT_FOUND');
    expect((await list()).map((a) => a.name)).toEqual(['brand/logo.png']);
  });

  it('refuses bad names and types (422) and stores nothing', async () => {
    for (const name of ['', '/abs.png', 'a/../b.png', 'a//b.png', 'sp ace.png', 'x'.repeat(201), 'trailing/']) {
      const res = await upload({ name, content_base64: PNG.toString('base64') }, bob.apiKey);
      expect(res.status, name).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'name']);
    }
    for (const bytes of [Buffer.from('<html><body>hi</body></html>'), Buffer.from('%PDF-1.7\n'), Buffer.from([0, 1, 2, 3, 4, 5])]) {
      const res = await upload({ name: 'logo.png', content_base64: bytes.toString('base64') }, bob.apiKey);
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'content_base64']);
    }
    expect(await list(bob.apiKey)).toEqual([]);
  });

  it('prints an asset, and answers a missing one as a warning: JSON, binary headers, job and webhook', async () => {
    const html = `<p>Invoice</p><img src="{{ asset('brand/logo.png') }}" width="32"><img src="{{ asset('missing.png') }}">`;
    const id = (await t.request('POST', '/v1/templates', { apiKey: alice.apiKey, body: { name: 'Logo', html } })).body.id as string;
    const expected = [{ code: 'ASSET_NOT_FOUND', message: expect.stringContaining('"missing.png"'), url: 'https://assets.pressroom.internal/a/missing.png' }];

    const json = await t.request('POST', '/v1/pdf/create', { apiKey: alice.apiKey, body: { template_id: id, data: {} } });
    expect(json.status, JSON.stringify(json.body)).toBe(200);
    expect(json.body.warnings).toEqual(expected);

    const binary = await t.request('POST', '/v1/pdf/create', { apiKey: alice.apiKey, body: { template_id: id, data: {}, export_type: 'binary' } });
    expect(binary.status).toBe(200);
    expect(binary.headers.get('x-pressroom-warnings')).toBe('1');
    expect(JSON.parse(binary.headers.get('x-pressroom-warning-details')!)).toEqual(expected);
    const logos = pdfTool('pdfimages', binary.bytes, ['-list']).split('\n').filter((row) => /^\s*1\s+\d+\s+image\s+1\s+1\s/.test(row));
    expect(logos).toHaveLength(1);

    const preview = await t.request('POST', '/v1/templates/preview', { apiKey: alice.apiKey, body: { html } });
    expect(preview.status).toBe(200);
    expect(preview.headers.get('x-pressroom-warnings')).toBe('1');

    // Bob's document naming the same asset gets nothing but the warning.
    const bobs = (await t.request('POST', '/v1/templates', { apiKey: bob.apiKey, body: { name: 'Logo', html } })).body.id as string;
    const bobJson = await t.request('POST', '/v1/pdf/create', { apiKey: bob.apiKey, body: { template_id: bobs, data: {} } });
    expect(bobJson.body.warnings.map((w: { url: string }) => w.url)).toEqual(['https://assets.pressroom.internal/a/brand/logo.png', 'https://assets.pressroom.internal/a/missing.png']);

    const queued = await t.request('POST', '/v1/pdf/create-async', { apiKey: alice.apiKey, body: { template_id: id, data: {}, webhook_url: `${receiver.url}/hook` } });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    const jobId = queued.body.job_id as string;
    t.services.startWorkers();
    const job = await until(async () => {
      const res = await t.request('GET', `/v1/pdf/jobs/${jobId}`, { apiKey: alice.apiKey });
      return res.body.status === 'completed' ? res.body : undefined;
    }, 120_000, 'the job to complete');
    expect(job.warnings).toEqual(expected);
    const [hook] = await receiver.waitFor(1, undefined, 120_000);
    expect(hook!.json.warnings).toEqual(expected);
  });
});
