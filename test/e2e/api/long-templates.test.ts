/**
 * Long templates are compiled and read off the event loop (issue 49; HARDENING, "the event loop"):
 * 2 MB of template tags took seconds of parsing at every save, free, while the whole service waited.
 * Now such a save holds a slot of the `templates` pool — a thread — while /metrics and /healthz
 * answer; what it saves, and how it refuses a broken one, is as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

/** ~2,000,000 characters of `{{ item.n }}` tags, the costliest shape to parse measured. */
const TAGS = '<p>{{ item.n }}</p>'.repeat(Math.floor(1_990_000 / 19));

describe('a 2 MB template', () => {
  let t: TestApp;
  let apiKey: string;
  const templateCount = async () =>
    ((await t.request('GET', '/v1/templates', { apiKey })).body.templates as unknown[]).length;
  const onThread = () =>
    until(
      async () =>
        /pressroom_pool_active\{pool="templates"\} 1\b/.test((await t.request('GET', '/metrics')).body as string),
      60_000,
      'the template on a template thread',
    );

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    apiKey = (await t.createAccount({ credits: 1 })).apiKey;
  });
  afterAll(async () => t?.close());

  it('is saved while the service answers: its parse runs on a template thread, and its fields are read', async () => {
    const pending = t.request('POST', '/v1/templates', { apiKey, body: { name: 'Long', html: TAGS } });
    await onThread();
    expect((await t.request('GET', '/healthz')).status).toBe(200);
    const res = await pending;
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(201);
    expect(res.body.fields).toEqual([expect.objectContaining({ key: 'item.n' })]);
  }, 180_000);

  it('is refused with its line when it does not parse, on a thread too, and nothing is saved', async () => {
    const before = await templateCount();
    const pending = t.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Broken', html: `${TAGS}\n{{ item.n ` },
    });
    await onThread();
    const res = await pending;
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      loc: ['body', 'html'],
      type: 'template_syntax',
      ctx: { part: 'html', line: 2 },
    });
    expect(await templateCount()).toBe(before);
  }, 180_000);

  it('has its fields followed as typed, off the event loop too', async () => {
    const pending = t.request('POST', '/v1/templates/fields', { apiKey, body: { html: `${TAGS}{{ other }}` } });
    await onThread();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.fields.map((f: { key: string }) => f.key)).toEqual(['item.n', 'other']);
  }, 180_000);
});
