/**
 * Batches under hostile input (issue 49), over real HTTP on SQLite and PostgreSQL, the workers stopped
 * (items stay unstarted) until the last test:
 * - an upload is checked as it streams: a free account's wide CSV is a 402 at its first row, a file past
 *   a bound (columns, a cell, a row, an unclosed quote, a long NDJSON line) a 422, and a large file the
 *   account can pay for but that fails at its last row is read without being held: the process's memory
 *   stays under a bound the old code passed by far; others are served meanwhile; nothing is charged;
 * - a 50,000-item batch is queued, and cancelled, a chunk at a time: another account is served while
 *   some of its items are queued (or refunded) and others not yet; every credit comes back exactly once;
 * - what a process that died leaves (a cancel, an intake) is finished by the settling loop;
 * - an Idempotency-Key covers the uploaded file's bytes, not only its name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { DIALECTS } from '../../support/databases.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

const FIELDS = [
  { key: 'name', label: 'Name', type: 'string', required: true },
  { key: 'hours', label: 'Hours', type: 'number', required: true },
];
const LETTER = '<p>{{ name }}: {{ hours }}</p>';
const MiB = 1024 * 1024;

/** A CSV of `rows` rows × `columns` one-character columns (name, hours, then c3…), as Buffer pieces. */
function wideCsv(rows: number, columns: number, lastRow?: string): Blob {
  const header = ['name', 'hours', ...Array.from({ length: columns - 2 }, (_, i) => `c${i + 3}`)].join(',');
  const row = `a,1${',a'.repeat(columns - 2)}\n`;
  const parts: string[] = [`${header}\n`];
  for (let i = 0; i < rows - (lastRow ? 1 : 0); i++) parts.push(row);
  if (lastRow) parts.push(lastRow);
  return new Blob(parts, { type: 'text/csv' });
}

/**
 * The process's memory while something runs, sampled until stopped: the most its JavaScript heap rose
 * above the lowest point before it, and how far its resident set rose above the start, in MB. Holding
 * rows is what raises the heap; measured from a running low, an earlier test's garbage collected
 * meanwhile neither hides nor adds to this one's (the resident set may be hidden by an earlier peak).
 */
function watchMemory(): { stop(): { heapMb: number; rssMb: number } } {
  const start = process.memoryUsage();
  let low = start.heapUsed;
  let rise = 0;
  let rss = start.rss;
  const sample = () => {
    const now = process.memoryUsage();
    low = Math.min(low, now.heapUsed);
    rise = Math.max(rise, now.heapUsed - low);
    rss = Math.max(rss, now.rss);
  };
  const timer = setInterval(sample, 25);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { heapMb: rise / MiB, rssMb: (rss - start.rss) / MiB };
    },
  };
}

describe.each(DIALECTS)('hostile batches on %s', (dialect) => {
  let t: TestApp;
  let free: { accountId: string; apiKey: string };
  let rich: { accountId: string; apiKey: string };
  let other: { accountId: string; apiKey: string };
  let freeTemplate: string;
  let richTemplate: string;

  const upload = async (apiKey: string, rows: Blob, o: { templateId: string; name?: string; key?: string }) => {
    const form = new FormData();
    form.set('template_id', o.templateId);
    form.set('rows', rows, o.name ?? 'rows.csv');
    const res = await fetch(`${t.baseUrl}/v1/pdf/batches`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, ...(o.key ? { 'idempotency-key': o.key } : {}) },
      body: form,
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const balance = async (apiKey: string) => (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const db = () => t.services.database.db;
  const count = async (
    table: 'batches' | 'jobs' | 'credit_transactions',
    accountId: string,
    type?: 'PDFGEN' | 'REFUND',
  ) => {
    const { rows } = await sql<{
      n: number;
    }>`select count(*) as n from ${sql.table(table)} where account_id = ${accountId} ${type ? sql`and transaction_type = ${type}` : sql``}`.execute(
      db(),
    );
    return Number(rows[0]!.n);
  };
  /** What a refusal must leave as it was: the balance, the ledger, the batches and their items. */
  const trace = async (who: { accountId: string; apiKey: string }) => [
    await balance(who.apiKey),
    await count('credit_transactions', who.accountId),
    await count('batches', who.accountId),
    await count('jobs', who.accountId),
  ];

  /**
   * Runs `work` while /healthz and another account's request are sent one after another (a first pair
   * at once, sent while the work has begun); returns the work's result, how many of each sent while it
   * ran succeeded, and for each other-account answer what `state()` read then.
   */
  async function whileServing<T, S>(
    work: Promise<T>,
    state: () => Promise<S>,
  ): Promise<{ result: T; served: S[]; healthy: number }> {
    let running = true;
    const served: S[] = [];
    let healthy = 0;
    const probe = (async () => {
      do {
        if ((await fetch(`${t.baseUrl}/healthz`)).ok) healthy += 1;
        const answer = await t.request('GET', '/v1/account', { apiKey: other.apiKey });
        if (answer.status === 200) served.push(await state());
      } while (running);
    })();
    try {
      return { result: await work, served, healthy };
    } finally {
      running = false;
      await probe;
    }
  }

  beforeAll(async () => {
    t = await startTestApp(dialect, { PRESSROOM_JOB_POLL_MS: '100', PRESSROOM_RENDER_CONCURRENCY: '1' });
    [free, rich, other] = [
      await t.createAccount({ credits: 0 }),
      await t.createAccount({ credits: 60_000, plan: 'enterprise' }),
      await t.createAccount({ credits: 1, plan: 'enterprise' }),
    ];
    freeTemplate = (
      await t.request('POST', '/v1/templates', {
        apiKey: free.apiKey,
        body: { name: 'Wide', html: LETTER, fields: FIELDS },
      })
    ).body.id;
    richTemplate = (
      await t.request('POST', '/v1/templates', {
        apiKey: rich.apiKey,
        body: { name: 'Many', html: LETTER, fields: FIELDS },
      })
    ).body.id;
  });
  // Closing after the cancelled 50,000-item batch passed the 180 s hook guard on PostgreSQL in two CI
  // runs on a slow machine (2026-12-03, suite 2,480 s against 847 s before); why it takes that long is not known.
  afterAll(async () => {
    await t?.close();
  }, 600_000);

  it("a free account's 30,000-row × 400-column upload is a 402 at its first row: memory bounded, others served, nothing charged", async () => {
    const before = await trace(free);
    const memory = watchMemory();
    const { result, served, healthy } = await whileServing(
      upload(free.apiKey, wideCsv(30_000, 400), { templateId: freeTemplate }),
      async () => true,
    );
    const grew = memory.stop();
    expect(
      grew.heapMb,
      `the heap grew by ${grew.heapMb.toFixed(0)} MB, the resident set by ${grew.rssMb.toFixed(0)} MB`,
    ).toBeLessThan(250);
    expect(result.status, JSON.stringify(result.body)).toBe(402);
    expect(result.body).toMatchObject({
      error: 'INSUFFICIENT_CREDITS',
      message: expect.stringContaining('nothing was charged'),
    });
    expect([healthy > 0, served.length > 0]).toEqual([true, true]);
    expect(await trace(free)).toEqual(before);
  });

  it('a paid upload that fails at its last row is read without being held: memory bounded, a 422, nothing charged', {
    timeout: 300_000,
  }, async () => {
    const before = await trace(rich);
    const memory = watchMemory();
    const { result, healthy } = await whileServing(
      upload(rich.apiKey, wideCsv(20_000, 400, `b,lots${',a'.repeat(398)}\n`), { templateId: richTemplate }),
      async () => true,
    );
    const grew = memory.stop();
    expect(
      grew.heapMb,
      `the heap grew by ${grew.heapMb.toFixed(0)} MB, the resident set by ${grew.rssMb.toFixed(0)} MB`,
    ).toBeLessThan(250);
    expect(result.status, JSON.stringify(result.body).slice(0, 300)).toBe(422);
    expect(result.body.detail).toEqual([
      {
        loc: ['body', 'rows', 'line', 20_001, 'column', 'hours'],
        msg: 'Expected a number, got "lots"',
        type: 'number_type',
      },
    ]);
    expect(healthy).toBeGreaterThan(0);
    expect(await trace(rich)).toEqual(before);
  });

  it('a file past a bound is a 422 as it streams, naming the bound; nothing charged', async () => {
    const before = await trace(rich);
    const cases: [string, Blob, string, unknown[]][] = [
      ['1,000 columns', wideCsv(1, 1000), 'too_many_columns', ['body', 'rows', 'line', 1]],
      [
        'a 2 MiB cell',
        new Blob([`name,hours\n${'x'.repeat(2 * MiB)},1\n`]),
        'row_too_long',
        ['body', 'rows', 'line', 2],
      ],
      [
        'an unclosed quote',
        new Blob([`name,hours\n"Ada,1\n${'Grace,2\n'.repeat(300_000)}`]),
        'row_too_long',
        ['body', 'rows', 'line'],
      ],
      [
        'a 300 KiB cell, under the row bound',
        new Blob([`name,hours\n"${'x'.repeat(300 * 1024)}",1\n`]),
        'cell_too_long',
        ['body', 'rows', 'line', 2, 'column', 'name'],
      ],
    ];
    for (const [what, file, type, loc] of cases) {
      const res = await upload(rich.apiKey, file, { templateId: richTemplate });
      expect([what, res.status, res.body.detail?.[0]?.type], JSON.stringify(res.body).slice(0, 300)).toEqual([
        what,
        422,
        type,
      ]);
      expect(res.body.detail[0].loc.slice(0, loc.length)).toEqual(loc);
    }
    const line = await upload(
      rich.apiKey,
      new Blob([`{"name":"${'x'.repeat(2 * MiB)}","hours":1}\n`], { type: 'application/x-ndjson' }),
      { templateId: richTemplate, name: 'rows.ndjson' },
    );
    expect([line.status, line.body.detail?.[0]?.type, line.body.detail?.[0]?.loc]).toEqual([
      422,
      'row_too_long',
      ['body', 'rows', 'line', 1],
    ]);
    expect(await trace(rich)).toEqual(before);
  });

  let bigBatch: string;
  it('a 50,000-item batch is queued a chunk at a time: another account is served while some of its items are queued and not all', {
    timeout: 300_000,
  }, async () => {
    const [before, jobsBefore, chargesBefore] = [
      await balance(rich.apiKey),
      await count('jobs', rich.accountId),
      await count('credit_transactions', rich.accountId, 'PDFGEN'),
    ];
    const items = Array.from({ length: 50_000 }, (_, i) => ({ data: { name: `Row ${i}`, hours: i } }));
    const queued = async () => (await count('jobs', rich.accountId)) - jobsBefore;
    const { result, served } = await whileServing(
      t.request('POST', '/v1/pdf/batches', { apiKey: rich.apiKey, body: { template_id: richTemplate, items } }),
      queued,
    );
    expect(result.status, JSON.stringify(result.body)).toBe(202);
    expect(result.body).toMatchObject({ total: 50_000, credits_remaining: before - 50_000 });
    bigBatch = result.body.batch_id;
    expect(
      served.some((n) => n > 0 && n < 50_000),
      `items queued when another account was served: ${served.join(', ')}`,
    ).toBe(true);
    expect(await count('credit_transactions', rich.accountId, 'PDFGEN')).toBe(chargesBefore + 50_000);
  });

  it('cancelling it answers at once that the cancel is under way; every credit comes back exactly once, a chunk at a time, while others are served', {
    timeout: 300_000,
  }, async () => {
    const cancelled = () =>
      db()
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('batch_id', '=', bigBatch)
        .where('error_code', '=', 'BATCH_CANCELLED')
        .executeTakeFirstOrThrow()
        .then((r) => Number(r.n));
    const answer = await t.request('POST', `/v1/pdf/batches/${bigBatch}/cancel`, { apiKey: rich.apiKey });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'cancelling', total: 50_000 });
    const ended = until(
      async () => {
        const b = (await t.request('GET', `/v1/pdf/batches/${bigBatch}`, { apiKey: rich.apiKey })).body;
        return b.status === 'cancelled' && b;
      },
      240_000,
      'the cancel to settle',
    );
    const { result, served } = await whileServing(ended, cancelled);
    expect(result).toMatchObject({ status: 'cancelled', cancelled: 50_000, completed: 0, pending: 0 });
    expect(
      served.some((n) => n > 0 && n < 50_000),
      `items refunded when another account was served: ${served.join(', ')}`,
    ).toBe(true);
    expect(await balance(rich.apiKey)).toBe(60_000);
    expect(await count('credit_transactions', rich.accountId, 'REFUND')).toBe(
      await count('credit_transactions', rich.accountId, 'PDFGEN'),
    );
  });

  it('an Idempotency-Key covers the uploaded file: another file of the same name is refused, the same file replays the batch', async () => {
    const poor = await t.createAccount({ credits: 2, plan: 'enterprise' });
    const template = (
      await t.request('POST', '/v1/templates', {
        apiKey: poor.apiKey,
        body: { name: 'Poor', html: LETTER, fields: FIELDS },
      })
    ).body.id;
    const first = await upload(poor.apiKey, new Blob(['name,hours\nAda,1\nGrace,2\n']), {
      templateId: template,
      key: 'march-rows',
    });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const after = await trace(poor);
    const other = await upload(poor.apiKey, new Blob(['name,hours\nAlan,3\nEdsger,4\n']), {
      templateId: template,
      key: 'march-rows',
    });
    expect([other.status, other.body.detail?.[0]?.type]).toEqual([422, 'idempotency_key_reused']);
    // The same file again: the first answer, though the account could not pay for it now.
    const again = await upload(poor.apiKey, new Blob(['name,hours\nAda,1\nGrace,2\n']), {
      templateId: template,
      key: 'march-rows',
    });
    expect([again.status, again.body.batch_id]).toEqual([202, first.body.batch_id]);
    expect(await trace(poor)).toEqual(after);
  });

  // Last: it starts the workers (their settling loop).
  it('what a process that died leaves is finished by the settling loop: a cancel, and an intake, each refunded exactly once', {
    timeout: 120_000,
  }, async () => {
    const start = await balance(rich.apiKey);
    const make = async (n: number) =>
      (
        await t.request('POST', '/v1/pdf/batches', {
          apiKey: rich.apiKey,
          body: {
            template_id: richTemplate,
            items: Array.from({ length: n }, (_, i) => ({ data: { name: `R${i}`, hours: i } })),
          },
        })
      ).body.batch_id as string;
    const [cancelling, intake] = [await make(1200), await make(700)];
    // As a process leaves them when it dies mid-way: marked, under a lease nobody renews any more.
    const dead = { locked_by: 'gone-host:1:dead', locked_until: Date.now() - 1 };
    await db()
      .updateTable('batches')
      .set({ status: 'cancelling', error_code: 'BATCH_CANCELLED', ...dead })
      .where('id', '=', cancelling)
      .execute();
    await db()
      .updateTable('batches')
      .set({ status: 'intake', ...dead })
      .where('id', '=', intake)
      .execute();
    expect(await balance(rich.apiKey)).toBe(start - 1900);
    t.services.startWorkers();
    const ended = await until(
      async () => {
        const b = (await t.request('GET', `/v1/pdf/batches/${cancelling}`, { apiKey: rich.apiKey })).body;
        return b.status === 'cancelled' && b;
      },
      100_000,
      'the dead cancel to be settled',
    );
    expect(ended).toMatchObject({ cancelled: 1200, completed: 0 });
    await until(
      async () =>
        (await db().selectFrom('batches').select('id').where('id', '=', intake).executeTakeFirst()) === undefined,
      100_000,
      'the dead intake to be removed',
    );
    expect(await db().selectFrom('jobs').select('id').where('batch_id', '=', intake).execute()).toEqual([]);
    expect(await balance(rich.apiKey)).toBe(start);
    const refunds = await count('credit_transactions', rich.accountId, 'REFUND');
    expect(refunds).toBe(await count('credit_transactions', rich.accountId, 'PDFGEN'));
  });
});
