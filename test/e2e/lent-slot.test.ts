/**
 * A render slot lent to an account alone is taken back for another account (docs/rendering.md "Fair
 * rendering"), over real HTTP with real Chromium. The lone account's documents each wait for an image
 * that this test's server holds until told to answer, so they hold their slots for as long as the test
 * wants, whatever the machine's speed: the other account is answered while both are still held, which
 * only taking a slot back allows. Nothing is asserted from the clock.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfText } from '../support/pdf-tools.js';
import { solidPng } from '../support/png-images.js';
import { startTestApp, until, type TestApp } from '../support/test-app.js';

/** An image server whose answers wait until the test opens their gate; it counts requests per gate. */
async function startGateServer() {
  const open = new Set<string>();
  const held = new Map<string, ServerResponse[]>();
  const requests = new Map<string, number>();
  const png = solidPng(8, 8, 128);
  const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' }).end(png);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const name = /^\/gate\/([\w-]+)\.png$/.exec(req.url ?? '')?.[1];
    if (!name) return void res.writeHead(404).end();
    requests.set(name, (requests.get(name) ?? 0) + 1);
    if (open.has(name)) return void answer(res);
    held.set(name, [...(held.get(name) ?? []), res]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/gate`,
    requests: (name: string) => requests.get(name) ?? 0,
    open(name: string) {
      open.add(name);
      for (const res of held.get(name) ?? []) if (!res.destroyed) answer(res);
      held.delete(name);
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

describe('a slot lent to an account alone (sqlite, real Chromium)', () => {
  let t: TestApp;
  let gate: Awaited<ReturnType<typeof startGateServer>>;

  beforeAll(async () => {
    gate = await startGateServer();
    t = await startTestApp('sqlite', {
      PRESSROOM_RENDER_CONCURRENCY: '2', // one slot per account by default, the other lent
      PRESSROOM_REMOTE_RESOURCES: `on,127.0.0.1:${gate.port}`,
      PRESSROOM_RENDER_TIMEOUT_MS: '120000',
    }, {
      // The held images must outlast the test's wait, not time out into a warning.
      tuning: { remoteResources: { timeoutMs: 120_000, documentTimeoutMs: 120_000 } },
    });
    await t.services.renderer.warmUp();
  });
  afterAll(async () => {
    await t?.close();
    await gate?.close();
  });

  it('is taken back at once when another account asks, and the lent document is still delivered and charged once', async () => {
    const alone = await t.createAccount({ credits: 10, plan: 'enterprise' });
    const other = await t.createAccount({ credits: 10, plan: 'enterprise' });
    const report = (await t.request('POST', '/v1/templates', {
      apiKey: alone.apiKey,
      body: { name: 'gated report', html: '<h1>Report {{ n }}</h1><img src="{{ gate }}/{{ n }}.png" width="40" height="40">' },
    })).body.id as string;
    const receipt = (await t.request('POST', '/v1/templates', { apiKey: other.apiKey, body: { name: 'receipt', html: '<p>Receipt {{ n }}</p>' } })).body.id as string;
    const generate = (account: { apiKey: string }, templateId: string, n: string) =>
      t.request('POST', '/v1/pdf/create', { apiKey: account.apiKey, body: { template_id: templateId, export_type: 'binary', data: { n, gate: gate.url } } });

    // One delivered render of the kind: enough history for a lone account to be lent the other slot.
    gate.open('r0');
    const first = await generate(alone, report, 'r0');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const { backfills, reclaims } = t.services.renderer.stats();

    // Two more at once: one in the account's own slot, one in the lent slot, both held by their images.
    const one = generate(alone, report, 'r1');
    const two = generate(alone, report, 'r2');
    await until(async () => gate.requests('r1') > 0 && gate.requests('r2') > 0, 60_000, 'both documents to hold a slot');
    expect(t.services.renderer.stats().backfills).toBe(backfills + 1);

    // The other account is answered while both documents still wait for their images.
    const receiptRes = await generate(other, receipt, 'b-1');
    expect(receiptRes.status, JSON.stringify(receiptRes.body)).toBe(200);
    expect(pdfText(receiptRes.bytes)).toContain('Receipt b-1');
    expect(t.services.renderer.stats().reclaims).toBe(reclaims + 1);
    expect((await t.request('GET', '/metrics')).body).toMatch(new RegExp(`^pressroom_render_reclaims_total ${reclaims + 1}$`, 'm'));

    // The lent document starts again once the account's own slot frees; both are delivered.
    gate.open('r1');
    gate.open('r2');
    const [res1, res2] = await Promise.all([one, two]);
    expect(res1.status, JSON.stringify(res1.body)).toBe(200);
    expect(res2.status, JSON.stringify(res2.body)).toBe(200);
    expect(pdfText(res1.bytes)).toContain('Report r1');
    expect(pdfText(res2.bytes)).toContain('Report r2');

    // Charged once per delivered document: three for the lone account, one for the other.
    expect((await t.request('GET', '/v1/account', { apiKey: alone.apiKey })).body.credits).toBe(7);
    expect((await t.request('GET', '/v1/account', { apiKey: other.apiKey })).body.credits).toBe(9);
    // Taken back is not failed: nothing counts against the lone account's failure budget.
    expect(t.services.renderer.stats().rendersFailed).toBe(0);
  }, 240_000);
});
