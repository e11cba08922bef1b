/**
 * One tenant cannot hurt another, over real HTTP with real Chromium:
 * - a free account looping heavy previews and heavy failing (refunded) jobs while a paying account
 *   renders: every one of the paying account's generations succeeds (SQLite: the database is not what
 *   is tested here);
 * - the render slots are work-conserving: one account alone holds both, and another account that
 *   arrives takes the first slot that frees while the lone account's other document still prints;
 * - on SQLite and PostgreSQL: the job claim serves another account's single job before a backlog is
 *   drained, a 300-item batch takes turns with another account's sync document and async job, and a webhook receiver that never answers holds up only its own account's deliveries.
 * Outcomes and order are asserted from state (statuses, rows, counters), never from the clock; the
 * paying account's latency is printed, not asserted.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { solidPng } from '../../support/documents/png-images.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

/** The attack's preview: many printed pages, a few seconds per render on a 2-core machine. */
const HEAVY_PREVIEW = '{% for i in range(n) %}<div style="page-break-after:always">Page {{ i }}</div>{% endfor %}';
const HEAVY_PAGES = 400;
/**
 * A job that holds a render slot until the template time limit, then fails (TEMPLATE_TIMEOUT, refunded).
 * Pure CPU: loops over small lists. (One `range(1000000000)` builds its list first, and whether it hit
 * the time limit or ran its renderer out of memory first was a race; CI once saw the memory win.)
 */
const SPIN = '{% for i in range(0, 1000000) %}{% for j in range(0, 1000) %}{% endfor %}{% endfor %}never printed';
const ONE_LINE = '<p>Receipt {{ n }}</p>';
const BROKEN = 'line one\n{{ undefined_function() }}';

type Account = { accountId: string; apiKey: string };

/** A webhook receiver that reads each request and never answers; counts requests and closed connections. */
async function startSilentReceiver(): Promise<{
  url: string;
  received: () => number;
  hanging: () => number;
  close: () => Promise<void>;
}> {
  let received = 0;
  let closed = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req) => {
    received += 1;
    req.socket.once('close', () => (closed += 1));
    req.resume();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/never-answers`,
    received: () => received,
    hanging: () => received - closed,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An image server whose answers wait until the test opens their gate; it counts requests per gate. */
async function startGateServer() {
  const open = new Set<string>();
  const held = new Map<string, ServerResponse[]>();
  const requests = new Map<string, number>();
  const png = solidPng(8, 8, 128);
  const answer = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' }).end(png);
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a noisy free account next to a paying one (sqlite, real Chromium)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(
      'sqlite',
      {
        PRESSROOM_RENDER_CONCURRENCY: '2',
        PRESSROOM_WORKER_CONCURRENCY: '2',
        PRESSROOM_JOB_POLL_MS: '100',
        PRESSROOM_TEMPLATE_TIMEOUT_MS: '3000',
        // A render may wait for a slot at most this long (then 503): a third of the default, so a paying
        // render queued behind the attacker's heavy renders would be refused, not just slow.
        PRESSROOM_RENDER_TIMEOUT_MS: '10000',
        PRESSROOM_SHUTDOWN_GRACE_MS: '5000',
      },
      {
        // Two failed jobs (≥ 3 s each) put the attacker over its budget, so that part is exercised too.
        tuning: { renderFairness: { failureBudgetSeconds: 5 } },
      },
    );
    await t.services.renderer.warmUp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('every generation of the paying account succeeds while the free account floods the renderer', async () => {
    const JOBS = 4;
    // "0 credits" but for its jobs: each is refunded when it fails, so the attack costs it nothing.
    const attacker = await t.createAccount({ credits: JOBS, plan: 'free' });
    const payer = await t.createAccount({ credits: 200, plan: 'enterprise' });
    let payerGenerations = 0;
    const spin = (
      await t.request('POST', '/v1/templates', { apiKey: attacker.apiKey, body: { name: 'spin', html: SPIN } })
    ).body.id as string;
    const receipt = (
      await t.request('POST', '/v1/templates', { apiKey: payer.apiKey, body: { name: 'receipt', html: ONE_LINE } })
    ).body.id as string;
    expect(spin).toBeTruthy();
    expect(receipt).toBeTruthy();

    const attackerJobs: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const res = await t.request('POST', '/v1/pdf/create-async', {
        apiKey: attacker.apiKey,
        body: { template_id: spin, data: {} },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      attackerJobs.push(res.body.job_id);
    }
    t.services.startWorkers();

    // Three loops of heavy previews, one after the other as fast as the attacker is answered.
    let attacking = true;
    const previewAnswers = new Map<string, number>();
    let previewsThatHeldASlot = 0;
    const loops = [0, 1, 2].map(async () => {
      while (attacking) {
        const res = await t
          .request('POST', '/v1/templates/preview', {
            apiKey: attacker.apiKey,
            body: { html: HEAVY_PREVIEW, data: { n: HEAVY_PAGES } },
          })
          .catch(() => undefined);
        if (!res) return; // the app is gone (the test failed and closed it)
        const key =
          res.status === 200 ? '200' : `${res.status} ${res.body?.error}: ${String(res.body?.message).slice(0, 60)}`;
        previewAnswers.set(key, (previewAnswers.get(key) ?? 0) + 1);
        if (res.status === 200 || res.body?.error === 'RENDER_TIMEOUT') previewsThatHeldASlot += 1;
        // A patient attacker: it waits as long as Retry-After says, so it stays within its rate limits.
        const pauseUntil =
          Date.now() + (res.status === 200 ? 0 : Math.max(250, Number(res.headers.get('retry-after') ?? 0) * 1000));
        while (attacking && Date.now() < pauseUntil) await new Promise((r) => setTimeout(r, 100));
      }
    });

    try {
      // The attack is on once the attacker has more renders than its share: some of them wait.
      await until(
        async () => (t.services.renderer.stats().queuedByAccount.get(attacker.accountId) ?? 0) > 0,
        60_000,
        'the attacker to have renders waiting',
      );
      // Its queue depth is visible per account in /metrics (only accounts with something waiting).
      await until(
        async () => {
          const metrics = await t.request('GET', '/metrics');
          return metrics.body.includes(`pressroom_render_queue_depth_by_account{account_id="${attacker.accountId}"}`);
        },
        60_000,
        'the attacker’s queue depth in /metrics',
      );

      const latenciesMs: number[] = [];
      const statuses: number[] = [];
      let underContention = 0;
      const attackerJobsDone = async () =>
        (
          await t.services.database.db
            .selectFrom('jobs')
            .select('status')
            .where('account_id', '=', attacker.accountId)
            .execute()
        ).every((j) => j.status === 'failed');
      const asyncJob = await t.request('POST', '/v1/pdf/create-async', {
        apiKey: payer.apiKey,
        body: { template_id: receipt, data: { n: 'async' } },
      });
      expect(asyncJob.status, JSON.stringify(asyncJob.body)).toBe(200);
      // Render for as long as the attack lasts: until the attacker's jobs have all run and two of its
      // heavy previews have held a slot, rendered or timed out (at least 6 generations, at most 150).
      for (let i = 0; i < 150; i++) {
        if (i >= 6 && previewsThatHeldASlot >= 2 && (await attackerJobsDone())) break;
        if ((t.services.renderer.stats().queuedByAccount.get(attacker.accountId) ?? 0) > 0) underContention += 1;
        const startedAt = performance.now();
        const res = await t.request('POST', '/v1/pdf/create', {
          apiKey: payer.apiKey,
          body: { template_id: receipt, export_type: 'binary', data: { n: i } },
        });
        latenciesMs.push(Math.round(performance.now() - startedAt));
        statuses.push(res.status);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.bytes.subarray(0, 5).toString()).toBe('%PDF-');
      }
      const job = await until(
        async () => {
          const res = await t.request('GET', `/v1/pdf/jobs/${asyncJob.body.job_id}`, { apiKey: payer.apiKey });
          return res.body.status === 'completed' || res.body.status === 'failed' ? res.body : undefined;
        },
        120_000,
        'the paying account’s job',
      );
      const sorted = [...latenciesMs].sort((x, y) => x - y);
      console.log(
        `paying account under attack: ${statuses.length} sync generations, statuses ${[...new Set(statuses)].join(',')}, ` +
          `latency median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms ` +
          `(${underContention} started while the attacker had renders waiting); async job ${job.status}`,
      );
      expect(statuses.every((status) => status === 200)).toBe(true);
      expect(job.status).toBe('completed');
      expect(underContention).toBeGreaterThan(0);
      payerGenerations = statuses.length + 1;
      console.log('attacker’s preview answers:', Object.fromEntries(previewAnswers));
    } finally {
      attacking = false;
      await Promise.all(loops);
    }

    // The attacker's jobs all failed and were refunded: the attack was free, and it went over its budget.
    await until(
      async () => {
        const rows = await t.services.database.db
          .selectFrom('jobs')
          .select('status')
          .where('account_id', '=', attacker.accountId)
          .execute();
        return rows.every((r) => r.status === 'failed');
      },
      120_000,
      'the attacker’s jobs to fail',
    );
    const failed = await t.services.database.db
      .selectFrom('jobs')
      .select(['id', 'error_code'])
      .where('account_id', '=', attacker.accountId)
      .execute();
    expect(failed.map((j) => j.error_code)).toEqual(Array(JOBS).fill('TEMPLATE_TIMEOUT'));
    // (read from the ledger: the attacker's own requests may be rate limited by now)
    expect(await t.services.ledger.balance(attacker.accountId)).toBe(JOBS);
    expect((await t.request('GET', '/v1/account', { apiKey: payer.apiKey })).body.credits).toBe(200 - payerGenerations);
    expect(t.services.renderer.stats().accountsOverFailureBudget).toBe(1);
    expect((await t.request('GET', '/metrics')).body).toMatch(/^pressroom_render_accounts_over_failure_budget 1$/m);
  }, 300_000);
});

describe('work-conserving render slots (sqlite, real Chromium)', () => {
  let t: TestApp;
  let gate: Awaited<ReturnType<typeof startGateServer>>;

  beforeAll(async () => {
    gate = await startGateServer();
    t = await startTestApp(
      'sqlite',
      {
        PRESSROOM_RENDER_CONCURRENCY: '2', // one slot per account while another waits
        PRESSROOM_REMOTE_RESOURCES: `on,127.0.0.1:${gate.port}`,
        PRESSROOM_RENDER_TIMEOUT_MS: '120000',
      },
      {
        // The held images must outlast the test's wait, not time out into a warning.
        tuning: { remoteResources: { timeoutMs: 120_000, documentTimeoutMs: 120_000 } },
      },
    );
    await t.services.renderer.warmUp();
  });
  afterAll(async () => {
    await t?.close();
    await gate?.close();
  });

  it('one account alone uses both slots; another account takes the first slot that frees, each charged once', async () => {
    const solo = await t.createAccount({ credits: 10, plan: 'enterprise' });
    const other = await t.createAccount({ credits: 10, plan: 'enterprise' });
    // Each report waits for an image this test's server holds until told to answer: it holds its slot as long as the test wants.
    const report = (
      await t.request('POST', '/v1/templates', {
        apiKey: solo.apiKey,
        body: {
          name: 'gated report',
          html: '<h1>Report {{ n }}</h1><img src="{{ gate }}/{{ n }}.png" width="40" height="40">',
        },
      })
    ).body.id as string;
    const receipt = (
      await t.request('POST', '/v1/templates', { apiKey: other.apiKey, body: { name: 'receipt', html: ONE_LINE } })
    ).body.id as string;
    const generate = (account: { apiKey: string }, templateId: string, n: string) =>
      t.request('POST', '/v1/pdf/create', {
        apiKey: account.apiKey,
        body: { template_id: templateId, export_type: 'binary', data: { n, gate: gate.url } },
      });
    const renderPool = async () => {
      const metrics = (await t.request('GET', '/metrics')).body as string;
      const read = (name: string) =>
        Number(new RegExp(`^${name}\\{pool="render"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? NaN);
      return { active: read('pressroom_pool_active'), waiting: read('pressroom_pool_waiting') };
    };

    // Alone, the account holds both slots (its cap is one while another account waits).
    const settled = new Set<string>();
    const track = <T>(name: string, promise: Promise<T>) => promise.finally(() => settled.add(name));
    const one = track('r1', generate(solo, report, 'r1'));
    const two = track('r2', generate(solo, report, 'r2'));
    await until(async () => gate.requests('r1') > 0 && gate.requests('r2') > 0, 60_000, 'both reports to hold a slot');
    expect(await renderPool()).toEqual({ active: 2, waiting: 0 });

    // Another account waits for the first of them to finish, and is served before anything else.
    const receiptAnswer = generate(other, receipt, 'b-1');
    await until(
      async () => (t.services.renderer.stats().queuedByAccount.get(other.accountId) ?? 0) === 1,
      60_000,
      'the other account to wait',
    );
    expect(await renderPool()).toEqual({ active: 2, waiting: 1 });
    gate.open('r1');
    const receiptRes = await receiptAnswer;
    expect(receiptRes.status, JSON.stringify(receiptRes.body)).toBe(200);
    expect(pdfText(receiptRes.bytes)).toContain('Receipt b-1');
    // Answered while the lone account's second report still holds its slot: nothing was taken back.
    expect(settled.has('r2')).toBe(false);
    expect(gate.requests('r2')).toBe(1);

    gate.open('r2');
    const [res1, res2] = await Promise.all([one, two]);
    expect(res1.status, JSON.stringify(res1.body)).toBe(200);
    expect(res2.status, JSON.stringify(res2.body)).toBe(200);
    expect(pdfText(res1.bytes)).toContain('Report r1');
    expect(pdfText(res2.bytes)).toContain('Report r2');
    // Charged once per delivered document.
    expect((await t.request('GET', '/v1/account', { apiKey: solo.apiKey })).body.credits).toBe(8);
    expect((await t.request('GET', '/v1/account', { apiKey: other.apiKey })).body.credits).toBe(9);
    expect(t.services.renderer.stats().rendersFailed).toBe(0);
  }, 240_000);
});

describe.each(DIALECTS)('jobs and webhooks across accounts on %s', (dialect) => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  const account = (credits: number) => t.createAccount({ credits, plan: 'enterprise' });
  const template = async (owner: Account, html: string) =>
    (await t.request('POST', '/v1/templates', { apiKey: owner.apiKey, body: { name: 't', html } })).body.id as string;
  const createAsync = async (owner: Account, body: Record<string, unknown>) => {
    const res = await t.request('POST', '/v1/pdf/create-async', { apiKey: owner.apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.job_id as string;
  };
  const jobsOf = (accountId: string) =>
    t.services.database.db
      .selectFrom('jobs')
      .select(['id', 'status', 'started_at'])
      .where('account_id', '=', accountId)
      .orderBy('seq')
      .execute();
  const deliveriesOf = (accountId: string) =>
    t.services.database.db
      .selectFrom('webhook_deliveries')
      .innerJoin('jobs', 'jobs.id', 'webhook_deliveries.job_id')
      .select(['webhook_deliveries.state', 'webhook_deliveries.attempts', 'webhook_deliveries.last_error'])
      .where('jobs.account_id', '=', accountId)
      .execute();

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp(
      dialect,
      {
        PRESSROOM_RENDER_CONCURRENCY: '2',
        PRESSROOM_WORKER_CONCURRENCY: '2',
        PRESSROOM_JOB_POLL_MS: '100',
        PRESSROOM_SHUTDOWN_GRACE_MS: '2000',
      },
      {
        // A receiver that never answers keeps each attempt for a minute.
        tuning: { webhooks: { timeoutMs: 60_000 } },
      },
    );
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('claims B’s single job with the first batch, not after A’s backlog', async () => {
    const a = await account(30);
    const b = await account(5);
    const aTemplate = await template(a, ONE_LINE);
    const bTemplate = await template(b, ONE_LINE);
    for (let i = 0; i < 12; i++) await createAsync(a, { template_id: aTemplate, data: { n: i } });
    const single = await createAsync(b, { template_id: bTemplate, data: { n: 'b' } });
    // The backlog is in place before any worker claims.
    t.services.startWorkers();

    const bJob = await until(
      async () => (await jobsOf(b.accountId)).find((j) => j.id === single && j.status === 'completed'),
      120_000,
      'B’s job',
    );
    const aJobs = await jobsOf(a.accountId);
    const aStartedWithOrBeforeB = aJobs.filter(
      (j) => j.started_at !== null && Number(j.started_at) <= Number(bJob.started_at),
    ).length;
    console.log(`${dialect}: when B's job started, ${aStartedWithOrBeforeB} of A's 12 jobs had started`);
    // Two worker slots: the first claim takes A's oldest job and B's.
    expect(aStartedWithOrBeforeB).toBeLessThanOrEqual(1);
    await until(async () => (await jobsOf(a.accountId)).every((j) => j.status === 'completed'), 180_000, 'A’s backlog');
  }, 300_000);

  it('a 300-item batch of A goes in turns with B: B’s sync document waits about one render, B’s async job a few claims (issue 40)', async () => {
    const a = await account(300);
    const b = await account(5);
    const aTemplate = await template(a, ONE_LINE);
    const bTemplate = await template(b, ONE_LINE);
    const items = Array.from({ length: 300 }, (_, i) => ({ data: { n: i } }));
    const res = await t.request('POST', '/v1/pdf/batches', {
      apiKey: a.apiKey,
      body: { template_id: aTemplate, items },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const batchId = res.body.batch_id as string;
    t.services.startWorkers();
    const aItems = () =>
      t.services.database.db
        .selectFrom('jobs')
        .select(['status', 'started_at'])
        .where('batch_id', '=', batchId)
        .execute();
    const doneOfA = async () => (await aItems()).filter((j) => j.status === 'completed').length;
    await until(async () => (await doneOfA()) >= 4, 120_000, 'A’s batch under way');

    // B's synchronous document, while A's items hold both render slots: A's documents finished meanwhile.
    const before = await doneOfA();
    const sync = await t.request('POST', '/v1/pdf/create', {
      apiKey: b.apiKey,
      body: { template_id: bTemplate, data: { n: 'sync' }, export_type: 'binary' },
    });
    const during = (await doneOfA()) - before;
    expect(sync.status).toBe(200);
    expect(await pdfText(sync.bytes)).toContain('Receipt sync');

    // B's async job: A's items that started after it was accepted and before it started.
    const accepted = Date.now();
    const single = await createAsync(b, { template_id: bTemplate, data: { n: 'async' } });
    const bJob = await until(
      async () => (await jobsOf(b.accountId)).find((j) => j.id === single && j.status === 'completed'),
      120_000,
      'B’s async job',
    );
    const ahead = (await aItems()).filter(
      (j) =>
        j.started_at !== null && Number(j.started_at) >= accepted && Number(j.started_at) < Number(bJob.started_at),
    ).length;
    console.log(
      `${dialect}: A's documents finished during B's sync request: ${during}; A's items started between B's job and its start: ${ahead}`,
    );
    expect(during).toBeLessThanOrEqual(3);
    expect(ahead).toBeLessThanOrEqual(3);

    const cancelled = await t.request('POST', `/v1/pdf/batches/${batchId}/cancel`, { apiKey: a.apiKey });
    expect(cancelled.status).toBe(200);
    // Items already rendering finish; then the batch ends cancelled.
    await until(
      async () =>
        (await t.request('GET', `/v1/pdf/batches/${batchId}`, { apiKey: a.apiKey })).body.status === 'cancelled',
      120_000,
      'A’s batch to end cancelled',
    );
    expect((await aItems()).every((j) => j.status === 'completed' || j.status === 'failed')).toBe(true);
  }, 300_000);

  it('a receiver that never answers holds up only its own account’s webhooks', async () => {
    t.services.startWorkers();
    const silent = await startSilentReceiver();
    try {
      const a = await account(30);
      const b = await account(5);
      const broken = await template(a, BROKEN);
      const bTemplate = await template(b, ONE_LINE);
      // 20 failing jobs (refunded), each with a pdf.failed webhook to a receiver that never answers:
      // more than the loop's 16 attempts at once.
      for (let i = 0; i < 20; i++) await createAsync(a, { template_id: broken, data: {}, webhook_url: silent.url });
      await until(
        async () => (await jobsOf(a.accountId)).every((j) => j.status === 'failed'),
        120_000,
        'A’s jobs to fail',
      );
      await until(async () => silent.received() >= 4, 60_000, 'A’s first webhooks to hang');

      const bJob = await createAsync(b, { template_id: bTemplate, data: { n: 'b' }, webhook_url: receiver.url });
      const [got] = await receiver.waitFor(1, (w) => w.json?.job_id === bJob, 60_000);
      expect(got!.json).toMatchObject({ job_id: bJob, status: 'completed' });
      await until(
        async () => (await deliveriesOf(b.accountId))[0]?.state === 'delivered',
        30_000,
        'B’s delivery to be recorded',
      );

      // At that moment every one of A's attempts is still hanging, and A has only its share in flight.
      expect(silent.received()).toBe(4);
      expect(silent.hanging()).toBe(4);
      const aDeliveries = await deliveriesOf(a.accountId);
      expect(aDeliveries).toHaveLength(20);
      expect(aDeliveries.every((d) => d.state === 'pending' && d.last_error === null)).toBe(true);
      expect(aDeliveries.filter((d) => d.attempts === 1)).toHaveLength(4);
      expect(aDeliveries.filter((d) => d.attempts === 0)).toHaveLength(16);
      expect(await deliveriesOf(b.accountId)).toEqual([{ state: 'delivered', attempts: 1, last_error: null }]);
    } finally {
      await silent.close();
    }
  }, 300_000);
});
