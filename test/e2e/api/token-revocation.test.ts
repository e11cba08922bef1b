/**
 * Revoking an account's access tokens over real HTTP, on SQLite and PostgreSQL: every token issued
 * before the revocation answers 401 from the very next request (from the admin API, or from the CLI in
 * another process), tokens issued afterwards work, and API keys and other accounts are not touched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { DIALECTS } from '../../support/databases.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../../support/test-app.js';

const READ_ONLY = ['/v1/templates', '/v1/account', '/v1/account/transactions'];

describe.each(DIALECTS)('access token revocation on %s', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(dialect);
  });
  afterAll(async () => t?.close());

  const issue = async (accountId: string, ttlSeconds = 31_536_000): Promise<string> => {
    const res = await t.request('POST', `/v1/admin/accounts/${accountId}/access-tokens`, {
      bearer: ADMIN_TOKEN,
      body: { ttl_seconds: ttlSeconds },
    });
    expect(res.status).toBe(201);
    return res.body.access_token as string;
  };
  const revoke = (accountId: string, bearer = ADMIN_TOKEN) =>
    t.request('POST', `/v1/admin/accounts/${accountId}/tokens/revoke`, { bearer });
  const statusWith = async (token: string, path = '/v1/account') =>
    (await t.request('GET', path, { bearer: token })).status;

  it('stops every earlier token at once, and only those of that account', async () => {
    const alice = await t.createAccount({ credits: 1 });
    const bob = await t.createAccount({ credits: 1 });
    const aliceTokens = [await issue(alice.accountId), await issue(alice.accountId, 60)];
    const bobToken = await issue(bob.accountId);
    for (const token of aliceTokens) expect(await statusWith(token)).toBe(200);

    const before = Date.now();
    const res = await revoke(alice.accountId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked_before: expect.any(String) });
    expect(new Date(res.body.revoked_before).toISOString()).toBe(res.body.revoked_before);
    expect(Date.parse(res.body.revoked_before)).toBeGreaterThanOrEqual(before - 1000);

    for (const token of aliceTokens) {
      for (const path of READ_ONLY) {
        const refused = await t.request('GET', path, { bearer: token });
        expect(refused.status, path).toBe(401);
        expect(refused.body).toEqual({ error: 'UNAUTHORIZED', message: expect.stringContaining('revoked') });
      }
    }
    expect(await statusWith(bobToken)).toBe(200);
    expect((await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).status).toBe(200);
  });

  it('lets tokens issued after the revocation work, and a later revocation stop them too', async () => {
    const carol = await t.createAccount();
    const old = await issue(carol.accountId);
    const first = await revoke(carol.accountId);
    const fresh = await issue(carol.accountId);
    expect(await statusWith(old)).toBe(401);
    expect(await statusWith(fresh)).toBe(200);
    const second = await revoke(carol.accountId);
    expect(Date.parse(second.body.revoked_before)).toBeGreaterThanOrEqual(Date.parse(first.body.revoked_before));
    expect(await statusWith(fresh)).toBe(401);
    expect(await statusWith(await issue(carol.accountId))).toBe(200);
  });

  it('answers 404 for an unknown account and 401 without the admin token', async () => {
    const unknown = await revoke('acc_doesnotexist00');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: 'ACCOUNT_NOT_FOUND' });
    const dave = await t.createAccount();
    const token = await issue(dave.accountId);
    expect((await revoke(dave.accountId, 'not-the-admin-token')).status).toBe(401);
    expect((await revoke(dave.accountId, token)).status).toBe(401);
    expect(await statusWith(token)).toBe(200);
  });

  it('revokes from the CLI, in another process, with effect on the running service', async () => {
    const erin = await t.createAccount();
    const old = await issue(erin.accountId);
    const run = await runCli(t, ['tokens', 'revoke', '--account', erin.accountId]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ revoked_before: expect.any(String) });
    expect(await statusWith(old)).toBe(401);
    expect(await statusWith(await issue(erin.accountId))).toBe(200);

    const missing = await runCli(t, ['tokens', 'revoke', '--account', 'acc_doesnotexist00']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^pressroom: ACCOUNT_NOT_FOUND: /m);
  }, 240_000);
});
