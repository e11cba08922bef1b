/**
 * The foundation over real HTTP, on SQLite and PostgreSQL: accounts and credentials, templates, the
 * read-only endpoints, error shapes and the order of checks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../../support/test-app.js';
import { DIALECTS } from '../../support/databases.js';

const INVOICE_HTML =
  '<h1>Invoice {{ invoice.number }}</h1>{% for item in items %}<p>{{ item.description }} {{ item.qty }}</p>{% endfor %}';

describe.each(DIALECTS)('foundation API on %s', (dialect) => {
  let t: TestApp;
  let alice: { accountId: string; apiKey: string };
  let bob: { accountId: string; apiKey: string };

  beforeAll(async () => {
    t = await startTestApp(dialect);
    alice = await t.createAccount({ credits: 5, email: 'alice@example.com', plan: 'pro' });
    bob = await t.createAccount({ credits: 1 });
  });
  afterAll(async () => t?.close());

  const countRows = async (table: 'templates' | 'credit_transactions' | 'accounts' | 'api_keys') =>
    Number(
      (
        await t.services.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  describe('credentials', () => {
    const readOnly = ['/v1/templates', '/v1/account', '/v1/account/transactions'];

    it('answers 401 UNAUTHORIZED for a missing or invalid key on every endpoint', async () => {
      for (const [method, path] of [
        ['GET', '/v1/templates'],
        ['GET', '/v1/account'],
        ['GET', '/v1/account/transactions'],
        ['GET', '/v1/templates/abcdefghijkl/fields'],
        ['POST', '/v1/templates'],
        ['DELETE', '/v1/templates/abcdefghijkl'],
      ] as const) {
        for (const apiKey of [undefined, 'pr_' + 'x'.repeat(48), 'nonsense']) {
          const res = await t.request(method, path, { apiKey, body: method === 'POST' ? {} : undefined });
          expect(res.status, `${method} ${path} ${apiKey}`).toBe(401);
          expect(res.body).toEqual({ error: 'UNAUTHORIZED', message: expect.any(String) });
        }
      }
    });

    it('accepts a JWT access token on the four read-only endpoints only', async () => {
      const template = await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'jwt', html: '{{ x }}' },
      });
      const issued = await t.request('POST', `/v1/admin/accounts/${alice.accountId}/access-tokens`, {
        bearer: ADMIN_TOKEN,
        body: { ttl_seconds: 120 },
      });
      expect(issued.status).toBe(201);
      const token = issued.body.access_token as string;
      for (const path of [...readOnly, `/v1/templates/${template.body.id}/fields`]) {
        const res = await t.request('GET', path, { bearer: token });
        expect(res.status, path).toBe(200);
      }
      const write = await t.request('POST', '/v1/templates', { bearer: token, body: { name: 'x', html: 'x' } });
      expect(write.status).toBe(401);
      const readTemplate = await t.request('GET', `/v1/templates/${template.body.id}`, { bearer: token });
      expect(readTemplate.status).toBe(401);
    });

    it('refuses a tampered, expired or wrongly signed token', async () => {
      const issued = await t.request('POST', `/v1/admin/accounts/${alice.accountId}/access-tokens`, {
        bearer: ADMIN_TOKEN,
        body: {},
      });
      const token = issued.body.access_token as string;
      const [h, p, s] = token.split('.');
      const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
      const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: bob.accountId })).toString('base64url')}.${s}`;
      const noneAlg = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
      const expired = `${h}.${Buffer.from(JSON.stringify({ ...payload, exp: 1 })).toString('base64url')}.${s}`;
      for (const bad of [forged, noneAlg, expired, `${token}x`]) {
        expect((await t.request('GET', '/v1/account', { bearer: bad })).status).toBe(401);
      }
    });

    it('stops a revoked key at once and keeps the others working', async () => {
      const second = await t.request('POST', `/v1/admin/accounts/${bob.accountId}/api-keys`, { bearer: ADMIN_TOKEN });
      expect(second.status).toBe(201);
      const key = second.body.api_key as string;
      expect((await t.request('GET', '/v1/account', { apiKey: key })).status).toBe(200);
      const revoked = await t.request('DELETE', `/v1/admin/api-keys/${key.slice(0, 12)}`, { bearer: ADMIN_TOKEN });
      expect(revoked.body).toEqual({ success: true });
      expect((await t.request('GET', '/v1/account', { apiKey: key })).status).toBe(401);
      expect((await t.request('GET', '/v1/account', { apiKey: bob.apiKey })).status).toBe(200);
      expect(
        (await t.request('DELETE', `/v1/admin/api-keys/${key.slice(0, 12)}`, { bearer: ADMIN_TOKEN })).status,
      ).toBe(404);
    });

    it('stores keys as a hash with a lookup prefix, never in clear', async () => {
      const rows = await t.services.database.db.selectFrom('api_keys').selectAll().execute();
      for (const row of rows) {
        expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
        expect(row.prefix).toHaveLength(12);
      }
      expect(JSON.stringify(rows)).not.toContain(alice.apiKey);
    });

    it('protects the admin API with the admin token', async () => {
      expect((await t.request('POST', '/v1/admin/accounts', { body: {} })).status).toBe(401);
      expect(
        (await t.request('POST', '/v1/admin/accounts', { bearer: 'wrong-token-wrong-token', body: {} })).status,
      ).toBe(401);
      expect((await t.request('POST', '/v1/admin/accounts', { apiKey: alice.apiKey, body: {} })).status).toBe(401);
    });
  });

  describe('account and credits', () => {
    it('shows the balance, and the initial credits as one BONUS transaction', async () => {
      const account = await t.request('GET', '/v1/account', { apiKey: alice.apiKey });
      expect(account.body).toMatchObject({ credits: 5, email: 'alice@example.com', plan: 'pro' });
      const tx = await t.request('GET', '/v1/account/transactions', { apiKey: alice.apiKey });
      expect(tx.body).toMatchObject({ total: 1, limit: 300, offset: 0 });
      expect(tx.body.transactions[0]).toMatchObject({
        transaction_type: 'BONUS',
        credits: -5,
        template_id: null,
        exec_tm: null,
      });
      expect(tx.body.transactions[0].transaction_ref).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('adds credits through the admin API and pages the history newest first', async () => {
      const carol = await t.createAccount({});
      for (const n of [1, 2, 3]) {
        const res = await t.request('POST', `/v1/admin/accounts/${carol.accountId}/credits`, {
          bearer: ADMIN_TOKEN,
          body: { credits: n, transaction_type: 'PURCHASE' },
        });
        expect(res.status).toBe(200);
      }
      expect((await t.request('GET', '/v1/account', { apiKey: carol.apiKey })).body.credits).toBe(6);
      const page = await t.request('GET', '/v1/account/transactions?limit=2&offset=1', { apiKey: carol.apiKey });
      expect(page.body.total).toBe(3);
      expect(page.body.transactions.map((x: { credits: number }) => x.credits)).toEqual([-2, -1]);
      const bad = await t.request('POST', `/v1/admin/accounts/${carol.accountId}/credits`, {
        bearer: ADMIN_TOKEN,
        body: { credits: 0, transaction_type: 'GIFT' },
      });
      expect(bad.status).toBe(422);
      expect(bad.body.detail.map((d: { loc: unknown }) => d.loc)).toEqual(
        expect.arrayContaining([
          ['body', 'credits'],
          ['body', 'transaction_type'],
        ]),
      );
      expect(
        (
          await t.request('POST', '/v1/admin/accounts/acc_nobody/credits', {
            bearer: ADMIN_TOKEN,
            body: { credits: 1, transaction_type: 'BONUS' },
          })
        ).status,
      ).toBe(404);
    });

    it('validates transaction paging in the FastAPI shape', async () => {
      const res = await t.request('GET', '/v1/account/transactions?limit=1001&offset=-1', { apiKey: alice.apiKey });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([
        expect.objectContaining({ loc: ['query', 'limit'], type: 'less_than_equal' }),
        expect.objectContaining({ loc: ['query', 'offset'], type: 'greater_than_equal' }),
      ]);
      expect(
        (await t.request('GET', '/v1/account/transactions?limit=abc', { apiKey: alice.apiKey })).body.detail[0],
      ).toMatchObject({ loc: ['query', 'limit'], type: 'int_type' });
    });
  });

  describe('templates', () => {
    it('creates, reads, lists, updates and deletes a template with inferred fields', async () => {
      const created = await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'Invoice', html: INVOICE_HTML, sample_data: { invoice: { number: 'INV-1' } } },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      expect(id).toHaveLength(12);
      expect(created.body).toMatchObject({
        name: 'Invoice',
        fields_inferred: true,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });

      const fields = await t.request('GET', `/v1/templates/${id}/fields`, { apiKey: alice.apiKey });
      expect(fields.body).toEqual([
        {
          key: 'invoice.number',
          label: 'Invoice number',
          type: 'string',
          required: true,
          helpText: 'Example: INV-1',
          spec: null,
        },
        {
          key: 'items',
          label: 'Items',
          type: 'array',
          required: true,
          helpText: null,
          spec: [
            { name: 'description', label: 'Description', type: 'text' },
            { name: 'qty', label: 'Qty', type: 'text' },
          ],
        },
      ]);

      const list = await t.request('GET', '/v1/templates', { apiKey: alice.apiKey });
      expect(list.body.templates).toContainEqual({
        id,
        name: 'Invoice',
        kind: 'pdf',
        created_at: created.body.created_at,
        updated_at: created.body.updated_at,
      });
      // TemplateFox's list item (OpenAPI 1.13.0) carries the template's kind besides the spec's four fields.
      expect(Object.keys(list.body.templates[0]).sort()).toEqual(['created_at', 'id', 'kind', 'name', 'updated_at']);

      const updated = await t.request('PUT', `/v1/templates/${id}`, {
        apiKey: alice.apiKey,
        body: { html: '{{ total | round(2) }}', name: 'Renamed' },
      });
      expect(updated.status).toBe(200);
      expect(updated.body.name).toBe('Renamed');
      expect(updated.body.fields).toEqual([expect.objectContaining({ key: 'total', type: 'number' })]);
      expect(Date.parse(updated.body.updated_at)).toBeGreaterThan(Date.parse(created.body.updated_at));

      const given = await t.request('PUT', `/v1/templates/${id}`, {
        apiKey: alice.apiKey,
        body: { fields: [{ key: 'total', label: 'Total due' }] },
      });
      expect(given.body.fields).toEqual([
        { key: 'total', label: 'Total due', type: 'string', required: false, helpText: null, spec: null },
      ]);
      expect(given.body.fields_inferred).toBe(false);

      expect((await t.request('DELETE', `/v1/templates/${id}`, { apiKey: alice.apiKey })).body).toEqual({
        success: true,
      });
      expect((await t.request('GET', `/v1/templates/${id}`, { apiKey: alice.apiKey })).body.error).toBe(
        'TEMPLATE_NOT_FOUND',
      );
    });

    it("answers 403 for another account's template and 404 for an unknown one, changing nothing", async () => {
      const created = await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'Private', html: '{{ a }}' },
      });
      const id = created.body.id;
      for (const [method, path] of [
        ['GET', `/v1/templates/${id}`],
        ['GET', `/v1/templates/${id}/fields`],
        ['PUT', `/v1/templates/${id}`],
        ['DELETE', `/v1/templates/${id}`],
      ] as const) {
        const res = await t.request(method, path, {
          apiKey: bob.apiKey,
          body: method === 'PUT' ? { name: 'stolen' } : undefined,
        });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body.error).toBe('FORBIDDEN');
      }
      expect((await t.request('GET', `/v1/templates/${id}`, { apiKey: alice.apiKey })).body.name).toBe('Private');
      expect((await t.request('GET', '/v1/templates', { apiKey: bob.apiKey })).body.templates).toEqual([]);
      const missing = await t.request('GET', '/v1/templates/zzzzzzzzzzzz/fields', { apiKey: bob.apiKey });
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe('TEMPLATE_NOT_FOUND');
      const short = await t.request('GET', '/v1/templates/short/fields', { apiKey: bob.apiKey });
      expect(short.status).toBe(422);
      expect(short.body.detail[0].loc).toEqual(['path', 'template_id']);
    });

    it('refuses a template that does not parse with 422 naming the line', async () => {
      const before = await countRows('templates');
      const res = await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'bad', html: 'ok\n{% for x in %}' },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'html'], type: 'template_syntax', ctx: { line: 2 } });
      expect(res.body.detail[0].msg).toMatch(/line 2/);
      expect(await countRows('templates')).toBe(before);
    });
  });

  describe('validation and errors', () => {
    it('reports every schema violation with its place, wrong types and unknown enum values included', async () => {
      const res = await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: {
          name: 7,
          html: '',
          page: { format: 'Quarto', orientation: 'sideways', margin: { top: '1 furlong' } },
          fields: [{ key: 'a' }],
        },
      });
      expect(res.status).toBe(422);
      const locs = res.body.detail.map((d: { loc: unknown[] }) => d.loc.join('.'));
      expect(locs).toEqual(
        expect.arrayContaining([
          'body.name',
          'body.html',
          'body.page.format',
          'body.page.orientation',
          'body.page.margin.top',
          'body.fields.0.label',
        ]),
      );
      const format = res.body.detail.find((d: { loc: unknown[] }) => d.loc.join('.') === 'body.page.format');
      expect(format).toMatchObject({ type: 'enum', msg: expect.stringContaining("'A4'") });
      expect(res.body.detail.find((d: { loc: unknown[] }) => d.loc.join('.') === 'body.name')).toMatchObject({
        type: 'string_type',
      });
    });

    it('refuses JSON nested deeper than 64 levels and NUL characters, writing nothing', async () => {
      const before = await countRows('templates');
      let deep: unknown = 'leaf';
      for (let i = 0; i < 70; i++) deep = { d: deep };
      const tooDeep = await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'deep', html: 'x', sample_data: deep },
      });
      expect(tooDeep.status).toBe(422);
      expect(tooDeep.body.detail[0]).toMatchObject({ type: 'json_too_deep' });
      expect(tooDeep.body.detail[0].loc.slice(0, 3)).toEqual(['body', 'sample_data', 'd']);

      const nul = await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'a\u0000b', html: 'x' },
      });
      expect(nul.status).toBe(422);
      expect(nul.body.detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'string_nul_character' });

      const proto = await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        rawBody: '{"name":"p","html":"x","sample_data":{"__proto__":{"polluted":1}}}',
      });
      expect(proto.status).toBe(422);
      expect(proto.body.detail[0].loc).toEqual(['body', 'sample_data', '__proto__']);

      const query = await t.request('GET', '/v1/account/transactions?limit=%00', { apiKey: alice.apiKey });
      expect(query.status).toBe(422);
      expect(await countRows('templates')).toBe(before);
    });

    it('answers invalid JSON with 422 and an oversized body with 413', async () => {
      const invalid = await t.request('POST', '/v1/templates', { apiKey: alice.apiKey, rawBody: '{"name": ' });
      expect(invalid.status).toBe(422);
      expect(invalid.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
      const huge = await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'big', html: 'x'.repeat(t.config.http.bodyLimitBytes + 10) },
      });
      expect(huge.status).toBe(413);
      expect(huge.body.error).toBe('PAYLOAD_TOO_LARGE');
    });

    it('answers unknown routes with a coded 404', async () => {
      const res = await t.request('GET', '/v1/nope', { apiKey: alice.apiKey });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: 'NOT_FOUND' });
    });
  });

  describe('order of checks and rate limits', () => {
    it('checks credential, then rate limit, then schema, then existence, always the same way', async () => {
      const tight = await t.createAccount({ rate_limit: { per_minute: 3 } });
      // Credential first: a bad key with a bad body is 401, not 422.
      expect((await t.request('POST', '/v1/templates', { apiKey: 'bad', body: { name: 5 } })).status).toBe(401);
      const first = await t.request('GET', '/v1/templates/zzzzzzzzzzzz/fields', { apiKey: tight.apiKey });
      expect(first.status).toBe(404);
      expect(first.headers.get('x-ratelimit-limit')).toBe('3');
      expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
      const reset = Number(first.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
      expect((await t.request('POST', '/v1/templates', { apiKey: tight.apiKey, body: { name: 5 } })).status).toBe(422);
      expect(
        (await t.request('GET', '/v1/account', { apiKey: tight.apiKey })).headers.get('x-ratelimit-remaining'),
      ).toBe('0');
      // Over the limit: 429 wins over the schema error and the missing template.
      const limited = await t.request('POST', '/v1/templates', { apiKey: tight.apiKey, body: { name: 5 } });
      expect(limited.status).toBe(429);
      expect(limited.body.error).toBe('RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
      // The other accounts are unaffected.
      expect((await t.request('GET', '/v1/account', { apiKey: bob.apiKey })).status).toBe(200);
    });
  });

  it('serves an OpenAPI 3.1 document listing every route, and the interactive reference', async () => {
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const routes = Object.entries(res.body.paths as Record<string, object>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(routes).toEqual(
      expect.arrayContaining([
        'GET /v1/templates',
        'GET /v1/templates/{template_id}/fields',
        'GET /v1/account',
        'GET /v1/account/transactions',
        'POST /v1/templates',
        'GET /v1/templates/{template_id}',
        'PUT /v1/templates/{template_id}',
        'DELETE /v1/templates/{template_id}',
        'POST /v1/admin/accounts',
        'POST /v1/admin/accounts/{account_id}/credits',
        'POST /v1/admin/accounts/{account_id}/api-keys',
        'DELETE /v1/admin/api-keys/{prefix}',
        'POST /v1/admin/accounts/{account_id}/access-tokens',
      ]),
    );
    const { validate } = await import('@readme/openapi-parser');
    const result = await validate(structuredClone(res.body));
    expect(result.valid, JSON.stringify((result as { errors?: unknown }).errors)).toBe(true);
    const docs = await t.request('GET', '/docs/');
    expect(docs.status).toBe(200);
    expect(docs.bytes.toString()).toContain('swagger');
  });
});

describe('an internal failure', () => {
  it('answers 500 INTERNAL_ERROR without a stack trace', async () => {
    const t = await startTestApp('sqlite');
    try {
      const { apiKey } = await t.createAccount({});
      await t.services.database.db.destroy();
      const res = await t.request('GET', '/v1/account', { apiKey });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        error: 'INTERNAL_ERROR',
        message: expect.stringContaining(res.headers.get('x-request-id')!),
      });
      expect(res.bytes.toString()).not.toMatch(/\bat \S+ \(|\.ts:|\.js:/);
    } finally {
      await t.app.close();
    }
  });
});

describe('admin API without PRESSROOM_ADMIN_TOKEN', () => {
  it('does not exist (404)', async () => {
    const t = await startTestApp('sqlite', { PRESSROOM_ADMIN_TOKEN: '' });
    try {
      const res = await t.request('POST', '/v1/admin/accounts', { bearer: ADMIN_TOKEN, body: {} });
      expect(res.status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
