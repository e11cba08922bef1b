/**
 * Every integer a client or an admin sends has a maximum, answered the same way on SQLite and
 * PostgreSQL: 422 `{detail}` past it (a coded error from the CLI), never a 500 from the database, and
 * nothing written. A balance that repeated grants would push past what an account may hold is refused
 * with BALANCE_LIMIT_EXCEEDED.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BALANCE, MAX_GRANT_CREDITS } from '../../../src/credits/ledger.js';
import { MAX_OFFSET } from '../../../src/http/schemas.js';
import { runCli } from '../../support/cli.js';
import { DIALECTS } from '../../support/databases.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../../support/test-app.js';

const TWO_POW_31 = 2 ** 31;
const CLI_TEST_TIMEOUT_MS = 240_000;

describe.each(DIALECTS)('integer bounds on %s', (dialect) => {
  let t: TestApp;
  let alice: { accountId: string; apiKey: string };

  beforeAll(async () => {
    t = await startTestApp(dialect);
    alice = await t.createAccount({ credits: 5 });
  });
  afterAll(async () => t?.close());

  const countRows = async (table: 'accounts' | 'credit_transactions') =>
    Number(
      (
        await t.services.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const balanceOf = async (apiKey: string) =>
    (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;

  describe('listing queries', () => {
    const cases = [
      { path: '/v1/account/transactions?offset=1e21', loc: ['query', 'offset'] },
      { path: '/v1/account/transactions?offset=9007199254740993', loc: ['query', 'offset'] },
      { path: '/v1/account/transactions?limit=1000000', loc: ['query', 'limit'] },
      { path: '/v1/account/transactions?limit=1e21', loc: ['query', 'limit'] },
      { path: '/v1/pdf/jobs?offset=1e21', loc: ['query', 'offset'] },
      { path: '/v1/pdf/jobs?limit=1000000', loc: ['query', 'limit'] },
    ];
    it.each(cases)('$path → 422 naming $loc', async ({ path, loc }) => {
      const res = await t.request('GET', path, { apiKey: alice.apiKey });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [
          expect.objectContaining({
            loc,
            type: 'less_than_equal',
            msg: expect.stringMatching(/^Input should be less than or equal to \d+$/),
          }),
        ],
      });
    });

    it('answers the deepest allowed offset with an empty page', async () => {
      for (const path of ['/v1/account/transactions', '/v1/pdf/jobs']) {
        const res = await t.request('GET', `${path}?offset=${MAX_OFFSET}&limit=1`, { apiKey: alice.apiKey });
        expect(res.status, path).toBe(200);
        expect(res.body).toMatchObject({ offset: MAX_OFFSET, limit: 1 });
      }
    });
  });

  describe('admin API', () => {
    const refusedCreations = [
      { body: { credits: TWO_POW_31 }, loc: ['body', 'credits'] },
      { body: { credits: MAX_GRANT_CREDITS + 1 }, loc: ['body', 'credits'] },
      { body: { rate_limit: { per_minute: TWO_POW_31 } }, loc: ['body', 'rate_limit', 'per_minute'] },
      { body: { rate_limit: { per_day: TWO_POW_31 } }, loc: ['body', 'rate_limit', 'per_day'] },
      { body: { rate_limit: { per_minute: 1e21 } }, loc: ['body', 'rate_limit', 'per_minute'] },
    ];
    it.each(refusedCreations)(
      'refuses account creation with $body (422 at $loc) and creates nothing',
      async ({ body, loc }) => {
        const accountsBefore = await countRows('accounts');
        const res = await t.request('POST', '/v1/admin/accounts', { bearer: ADMIN_TOKEN, body });
        expect(res.status).toBe(422);
        expect(res.body.detail).toEqual([expect.objectContaining({ loc, type: 'less_than_equal' })]);
        expect(await countRows('accounts')).toBe(accountsBefore);
      },
    );

    it('accepts the largest rate limits and still counts requests under them', async () => {
      const created = await t.createAccount({ rate_limit: { per_minute: 1_000_000, per_day: 1_000_000_000 } });
      const res = await t.request('GET', '/v1/account', { apiKey: created.apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('1000000');
    });

    it('refuses a grant of 2^31 credits with 422 and changes nothing', async () => {
      const before = { balance: await balanceOf(alice.apiKey), rows: await countRows('credit_transactions') };
      const res = await t.request('POST', `/v1/admin/accounts/${alice.accountId}/credits`, {
        bearer: ADMIN_TOKEN,
        body: { credits: TWO_POW_31, transaction_type: 'PURCHASE' },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'credits'], type: 'less_than_equal' })]);
      expect({ balance: await balanceOf(alice.apiKey), rows: await countRows('credit_transactions') }).toEqual(before);
    });

    it('refuses a grant that would take the balance past the most an account may hold, and changes nothing', async () => {
      const rich = await t.createAccount({ credits: MAX_GRANT_CREDITS });
      const grant = (credits: number) =>
        t.request('POST', `/v1/admin/accounts/${rich.accountId}/credits`, {
          bearer: ADMIN_TOKEN,
          body: { credits, transaction_type: 'BONUS' },
        });
      expect((await grant(MAX_BALANCE - MAX_GRANT_CREDITS)).body).toEqual({ credits: MAX_BALANCE });
      const rows = await countRows('credit_transactions');
      for (const credits of [1, MAX_GRANT_CREDITS]) {
        const res = await grant(credits);
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          error: 'BALANCE_LIMIT_EXCEEDED',
          message: expect.stringContaining(`add at most 0`),
        });
      }
      expect(await balanceOf(rich.apiKey)).toBe(MAX_BALANCE);
      expect(await countRows('credit_transactions')).toBe(rows);
    });
  });

  // Each CLI run is a fresh Node process that loads the whole service (~5 s of CPU): generous deadlines.
  describe('CLI', () => {
    it(
      'refuses out-of-range numbers before touching the database',
      async () => {
        const accountsBefore = await countRows('accounts');
        const cases = [
          { args: ['accounts', 'create', '--credits', String(TWO_POW_31)], option: '--credits' },
          { args: ['accounts', 'create', '--per-minute', String(TWO_POW_31)], option: '--per-minute' },
          {
            args: ['credits', 'add', '--account', alice.accountId, '--credits', String(TWO_POW_31)],
            option: '--credits',
          },
        ];
        const balance = await balanceOf(alice.apiKey);
        const runs = await Promise.all(cases.map(({ args }) => runCli(t, args)));
        for (const [i, { args, option }] of cases.entries()) {
          const run = runs[i]!;
          expect(run.code, args.join(' ')).not.toBe(0);
          expect(run.stderr).toContain(option);
          expect(run.stderr).toMatch(/must be a whole number from \d+ to \d+/);
          expect(run.stdout).toBe('');
        }
        expect(await countRows('accounts')).toBe(accountsBefore);
        expect(await balanceOf(alice.apiKey)).toBe(balance);
      },
      CLI_TEST_TIMEOUT_MS,
    );

    it(
      'refuses a grant past the balance limit with the coded error',
      async () => {
        const rich = await t.createAccount({ credits: MAX_GRANT_CREDITS });
        const filled = await runCli(t, [
          'credits',
          'add',
          '--account',
          rich.accountId,
          '--credits',
          String(MAX_BALANCE - MAX_GRANT_CREDITS),
        ]);
        expect(filled.code).toBe(0);
        expect(JSON.parse(filled.stdout)).toEqual({ credits: MAX_BALANCE });
        const refused = await runCli(t, ['credits', 'add', '--account', rich.accountId, '--credits', '1']);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toMatch(/^pressroom: BALANCE_LIMIT_EXCEEDED: /m);
        expect(await balanceOf(rich.apiKey)).toBe(MAX_BALANCE);
      },
      CLI_TEST_TIMEOUT_MS,
    );
  });
});
