/**
 * No charge without a document, across a crash (issue 12). The embedded deployment (`serve --role
 * all`) is SIGKILLed — its whole process group and Chromium — while synchronous generations with and
 * without an Idempotency-Key are in flight, then started again. On SQLite and PostgreSQL:
 * - every keyed request, retried with its own key, ends in a 200, and each key is charged once in total;
 * - every request without a key that was cut off is refunded exactly once (its reservation voided by
 *   the restarted process once the lease ran out); only answered requests stay charged;
 * - nothing is left pending, and balance = −Σ transactions for both accounts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, until, type Cluster, type HttpResponse } from '../../support/cluster.js';

// ~6 ms of template work per 1000 iterations on a fast 2-core machine (about 4× that on a slow one):
// long enough that most requests are still queued or rendering when the process dies.
const SLOW =
  '{% for i in range(0, n) %}{% for j in range(0, 1000) %}{% endfor %}{% endfor %}<h1>Invoice {{ label }}</h1>';
const PER_KIND = 16;
const CREDITS = 100;
const LEASE_MS = 3000;

interface Outcome {
  response?: HttpResponse;
  error?: unknown;
}

describe.each(['sqlite', 'postgres'] as const)('a crash during synchronous generation on %s', (database) => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster({
      alls: 1,
      database,
      storage: 'local',
      env: { PRESSROOM_LEASE_MS: String(LEASE_MS), PRESSROOM_TEMPLATE_TIMEOUT_MS: '30000' },
    });
  });
  afterAll(async () => {
    await cluster?.close();
  });

  async function ledgerOf(accountId: string) {
    const txs = await cluster.db
      .selectFrom('credit_transactions')
      .selectAll()
      .where('account_id', '=', accountId)
      .execute();
    const balance = (
      await cluster.db.selectFrom('accounts').select('credits').where('id', '=', accountId).executeTakeFirstOrThrow()
    ).credits;
    const sum = txs.reduce((total, t) => total + t.credits, 0);
    const pdfgen = txs.filter((t) => t.transaction_type === 'PDFGEN').length;
    const refunds = txs.filter((t) => t.transaction_type === 'REFUND').length;
    return { balance, sum, pdfgen, refunds, charged: pdfgen - refunds };
  }
  const pending = async () =>
    Number(
      (
        await cluster.db
          .selectFrom('credit_reservations')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('charges every keyed request once after its retry, and refunds every cut-off request without a key', async () => {
    const first = cluster.alls[0]!;
    const keyed = await cluster.createAccount({ credits: CREDITS, plan: 'enterprise' });
    const unkeyed = await cluster.createAccount({ credits: CREDITS, plan: 'enterprise' });
    const template = async (apiKey: string) =>
      (await first.request('POST', '/v1/templates', { apiKey, body: { name: 'slow', html: SLOW } })).body.id as string;
    const keyedTemplate = await template(keyed.apiKey);
    const unkeyedTemplate = await template(unkeyed.apiKey);
    const bodyOf = (templateId: string, i: number) => ({
      template_id: templateId,
      data: { n: 150, label: `#${i}` },
      export_type: i % 4 === 0 ? 'binary' : 'url',
    });

    let answered = 0;
    let onAnswer: () => void = () => {};
    const fifthAnswer = new Promise<void>((resolve) => (onAnswer = () => ++answered === 5 && resolve()));
    const send = (apiKey: string, body: unknown, key?: string): Promise<Outcome> =>
      first.request('POST', '/v1/pdf/create', { apiKey, body, headers: key ? { 'idempotency-key': key } : {} }).then(
        (response) => (onAnswer(), { response }),
        (error: unknown) => ({ error }),
      );
    const keyedRuns = Array.from({ length: PER_KIND }, (_, i) =>
      send(keyed.apiKey, bodyOf(keyedTemplate, i), `order-${i}`),
    );
    const unkeyedRuns = Array.from({ length: PER_KIND }, (_, i) => send(unkeyed.apiKey, bodyOf(unkeyedTemplate, i)));

    await fifthAnswer;
    first.crashWhole();
    await first.exited;
    const keyedOutcomes = await Promise.all(keyedRuns);
    const unkeyedOutcomes = await Promise.all(unkeyedRuns);
    const cutOff = [...keyedOutcomes, ...unkeyedOutcomes].filter((o) => o.error).length;
    expect(cutOff, 'the crash should cut off requests in flight').toBeGreaterThan(0);

    const second = await cluster.spawn('all');
    // Keyed: every request (answered or not) is retried with its own key until it succeeds; a key whose
    // request died answers 409 until its lease runs out, then the retry takes it over.
    const retried = await Promise.all(
      keyedOutcomes.map(async (outcome, i) => {
        const body = bodyOf(keyedTemplate, i);
        return until(
          async () => {
            const res = await second.request('POST', '/v1/pdf/create', {
              apiKey: keyed.apiKey,
              body,
              headers: { 'idempotency-key': `order-${i}` },
            });
            if (res.status === 409) return undefined;
            return res;
          },
          180_000,
          `the retry of order-${i}`,
        );
      }),
    );
    for (const res of retried) expect(res.status).toBe(200);
    retried.forEach((res, i) => {
      const first200 = keyedOutcomes[i]!.response;
      // A request answered before the crash gets the same answer again.
      if (first200?.status === 200 && i % 4 !== 0) expect(res.body.url).toBe(first200.body.url);
      if (i % 4 === 0) expect(res.headers.get('content-type')).toBe('application/pdf');
    });

    // Reservations of the dead process are voided once their lease has run out.
    await until(async () => (await pending()) === 0, 120_000, 'no reservation left pending');

    const k = await ledgerOf(keyed.accountId);
    expect(k.charged).toBe(PER_KIND);
    expect(k.balance).toBe(CREDITS - PER_KIND);
    expect(k.balance).toBe(0 - k.sum);

    const u = await ledgerOf(unkeyed.accountId);
    const delivered = unkeyedOutcomes.filter((o) => o.response?.status === 200).length;
    const cutOffUnkeyed = unkeyedOutcomes.filter((o) => o.error).length;
    // Never a charge without an answer. The other direction is allowed by design (credits/paid-request.ts): a
    // request without a key is charged once its answer has been handed to the connection, so answers
    // handed over in the instant before the kill, their charges not yet posted, are free. How many that
    // is depends on how many finished at that instant (measured: 1 or 2 on a loaded 2-core machine), not
    // a number to pin; what is pinned is that each of them had its credit reserved and voided, once.
    expect(u.charged).toBeLessThanOrEqual(delivered);
    expect(u.pdfgen).toBeGreaterThanOrEqual(delivered);
    // Cut-off requests that had reserved a credit got it back, once each (a REFUND refers to its PDFGEN, uniquely).
    expect(u.refunds).toBe(u.pdfgen - u.charged);
    if (cutOffUnkeyed > 0) expect(u.refunds).toBeGreaterThan(0);
    expect(u.balance).toBe(CREDITS - u.charged);
    expect(u.balance).toBe(0 - u.sum);
  });
});
