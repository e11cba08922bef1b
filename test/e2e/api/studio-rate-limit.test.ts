/**
 * The studio's own calls do not spend the account's API rate limit (issue 50 point 9): an open studio
 * (its sign-in reads, a batch page's poll every 2 s) ate a free plan's daily quota. Its reads spend the
 * studio's own budget, and the account's limit, as the API reports it, stays where it was; the same
 * reads with the API key alone count; generation and writes through the studio still count. A program
 * claiming to be the studio gains that budget at most. In memory and in Redis (the limiter's two stores).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STUDIO_REQUESTS_PER_MINUTE } from '../../../src/rate-limits/studio-budget.js';
import { STUDIO_CLIENT, STUDIO_CLIENT_HEADER } from '../../../src/shared/studio-client.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../../support/test-app.js';

/** What the studio's client sends (studio/src/api/client.ts). */
const STUDIO = { [STUDIO_CLIENT_HEADER]: STUDIO_CLIENT };

describe.each([
  ['memory', {}],
  ['Redis', { PRESSROOM_REDIS_URL: 'redis://127.0.0.1:6379' }],
] as const)('the studio’s requests and the account’s rate limit (%s)', (_store, env) => {
  let t: TestApp;
  let templateId: string;
  let account: { accountId: string; apiKey: string };

  beforeAll(async () => {
    t = await startTestApp('sqlite', env);
    // The day binds (X-RateLimit-Remaining is the lower of the two windows), far below the studio's budget.
    account = await t.createAccount({ credits: 10, plan: 'free', rate_limit: { per_minute: 1000, per_day: 100 } });
    const created = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: { name: 'Note', html: '<p>Hello {{ name }}</p>' },
    });
    templateId = created.body.id;
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });

  const remaining = (res: { headers: Headers }) => Number(res.headers.get('x-ratelimit-remaining'));
  /** The account's remaining requests as the API reports them, spending one to ask. */
  const asked = async () => remaining(await t.request('GET', '/v1/account', { apiKey: account.apiKey }));
  /** The studio's sign-in reads and a batch page's polls. */
  const studioReads = [
    '/v1/account',
    '/v1/templates',
    '/v1/account/api-keys',
    '/v1/pdf/jobs',
    '/v1/pdf/batches',
    ...Array.from({ length: 25 }, () => '/v1/pdf/jobs?limit=20'),
  ];

  it('an open studio session’s reads leave the account’s remaining quota as it was; the same reads with the API key alone spend it', async () => {
    const before = await asked();
    for (const path of studioReads) {
      const res = await t.request('GET', path, { apiKey: account.apiKey, headers: STUDIO });
      expect(res.status, path).toBe(200);
      // The headers the studio shows are the account's limit, as it stands.
      expect(remaining(res), path).toBe(before);
      expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    }
    expect(await asked()).toBe(before - 1);

    for (const path of studioReads)
      expect((await t.request('GET', path, { apiKey: account.apiKey })).status, path).toBe(200);
    expect(await asked()).toBe(before - 2 - studioReads.length);
  });

  it('generation and writes through the studio still count against the account, and generation is charged', async () => {
    const before = await asked();
    const pdf = await t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      headers: STUDIO,
      body: { template_id: templateId, data: { name: 'Ada' }, export_type: 'url' },
    });
    expect(pdf.status, JSON.stringify(pdf.body)).toBe(200);
    expect(remaining(pdf)).toBe(before - 1);
    expect(pdf.body.credits_remaining).toBe(9);
    const saved = await t.request('PUT', `/v1/templates/${templateId}`, {
      apiKey: account.apiKey,
      headers: STUDIO,
      body: { name: 'Note 2' },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(remaining(saved)).toBe(before - 2);
  });

  it('the mark counts for nothing with an access token (the studio signs in with an API key)', async () => {
    const issued = await t.request('POST', `/v1/admin/accounts/${account.accountId}/access-tokens`, {
      bearer: ADMIN_TOKEN,
      body: { ttl_seconds: 120 },
    });
    const before = await asked();
    const res = await t.request('GET', '/v1/templates', { bearer: issued.body.access_token, headers: STUDIO });
    expect(res.status).toBe(200);
    expect(remaining(res)).toBe(before - 1);
  });

  it('the studio’s live preview spends its own budget, not the account’s', async () => {
    const before = await asked();
    const preview = await t.request('POST', '/v1/templates/preview', {
      apiKey: account.apiKey,
      headers: STUDIO,
      body: { html: '<p>Hi</p>', data: {} },
    });
    expect(preview.status).toBe(200);
    expect(remaining(preview)).toBe(before);
    expect(await asked()).toBe(before - 1);
  });

  it('a program claiming to be the studio gets the studio’s budget at most, and its API limit is untouched', async () => {
    const other = await t.createAccount({ plan: 'free', rate_limit: { per_minute: 1000, per_day: 100 } });
    let served = 0;
    let refused: Awaited<ReturnType<TestApp['request']>> | undefined;
    while (!refused && served <= STUDIO_REQUESTS_PER_MINUTE) {
      const res = await t.request('GET', '/v1/templates', { apiKey: other.apiKey, headers: STUDIO });
      if (res.status === 200) served += 1;
      else refused = res;
    }
    expect(served).toBe(STUDIO_REQUESTS_PER_MINUTE);
    expect(refused?.status).toBe(429);
    expect(refused?.body).toEqual({
      error: 'RATE_LIMITED',
      message: expect.stringContaining('Your API rate limit is not affected.'),
    });
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    // The account's own limit: all 100 of the day still there for the integration.
    const api = await t.request('GET', '/v1/templates', { apiKey: other.apiKey });
    expect(api.status).toBe(200);
    expect(remaining(api)).toBe(99);
  });
});
