/**
 * The parse pool with real worker threads: a large body comes back equal to JSON.parse's value, a
 * malformed or unsafe one with the same message and issues the event loop would give, and each bound
 * (per account, waiting bodies, a thread's memory) refuses with its coded error while the pool goes on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { joinJson } from './json-pieces.js';
import { JsonParsePool, parseHeapBytes, type JsonParsePoolOutcome } from './json-parse-pool.js';
import { jsonParseHeapEstimate } from './json-heap-estimate.js';
import { jsonSafetyIssues } from './json-safety.js';

const pools: JsonParsePool[] = [];
function pool(options: Partial<ConstructorParameters<typeof JsonParsePool>[0]> = {}) {
  const outcomes: JsonParsePoolOutcome[] = [];
  const created = new JsonParsePool({
    threads: 1,
    queueLimit: 4,
    accountLimit: 4,
    memoryMb: 256,
    onSettled: (o) => outcomes.push(o),
    ...options,
  });
  pools.push(created);
  return { pool: created, outcomes };
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const bytes = (text: string) => Buffer.from(text, 'utf8');
const immediately = () => Promise.resolve();

/** About `count` rows of invoice-like data: many small objects, as a large `data` usually is. */
function rows(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    sku: `SKU-${i}`,
    qty: i % 7,
    price: (i * 13.37) % 1000,
    tags: ['a', 'ü', 'x,y'],
  }));
}

/** The error a rejected promise carries. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('JSON parse pool', () => {
  it('parses a large body on a thread into the value JSON.parse gives', async () => {
    const { pool: p, outcomes } = pool();
    const text = JSON.stringify({
      template_id: 't',
      data: { rows: rows(20_000), last: { deep: { value: 'far down' } } },
    });
    expect(text.length).toBeGreaterThan(1_000_000);
    const outcome = await p.parse(bytes(text), 'acct');
    expect(outcome.kind).toBe('parsed');
    if (outcome.kind !== 'parsed') return;
    expect(await joinJson(outcome.piece, immediately)).toStrictEqual(JSON.parse(text));
    expect(outcomes).toEqual(['parsed']);
  });

  it('answers malformed JSON with the message JSON.parse gives on the event loop', async () => {
    const { pool: p, outcomes } = pool();
    const text = `{"data": [${'1,'.repeat(200_000)} oops]}`;
    let expected = '';
    try {
      JSON.parse(text);
    } catch (error) {
      expected = (error as Error).message;
    }
    expect(await p.parse(bytes(text), 'acct')).toEqual({ kind: 'syntax', message: expected });
    expect(outcomes).toEqual(['invalid']);
  });

  it('answers too deep, NUL and __proto__ with the issues of the safety walk', async () => {
    const { pool: p } = pool();
    const value = { pad: 'x'.repeat(300_000), deep: JSON.parse(`${'['.repeat(70)}1${']'.repeat(70)}`) as unknown };
    const text = JSON.stringify(value).replace('"pad"', '"__proto__":1,"n\\u0000":2,"pad"');
    const outcome = await p.parse(bytes(text), 'acct');
    expect(outcome).toEqual({ kind: 'unsafe', issues: jsonSafetyIssues(JSON.parse(text), ['body']) });
    if (outcome.kind !== 'unsafe') return;
    expect(outcome.issues.map((i) => i.type)).toEqual(['forbidden_key', 'string_nul_character', 'json_too_deep']);
  });

  it('treats a body of whitespace as no body', async () => {
    const { pool: p } = pool();
    expect(await p.parse(bytes(' \n'.repeat(200_000)), 'acct')).toEqual({ kind: 'empty' });
  });

  it('refuses an account past its share with 429, and others still get theirs', async () => {
    const { pool: p, outcomes } = pool({ accountLimit: 2, queueLimit: 10 });
    const body = () => bytes(JSON.stringify({ data: rows(5_000) }));
    const first = [p.parse(body(), 'greedy'), p.parse(body(), 'greedy')];
    const third = await rejection(p.parse(body(), 'greedy'));
    expect(third).toBeInstanceOf(AppError);
    expect(third).toMatchObject({ code: 'RATE_LIMITED', details: { retryAfterSeconds: 1 } });
    const other = p.parse(body(), 'patient');
    expect((await Promise.all([...first, other])).map((o) => o.kind)).toEqual(['parsed', 'parsed', 'parsed']);
    // Its share is back once its bodies are answered.
    expect((await p.parse(body(), 'greedy')).kind).toBe('parsed');
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(1);
  });

  it('serves the waiting line round robin by account, not first come first served', async () => {
    const order: string[] = [];
    const { pool: p } = pool({ threads: 1, queueLimit: 10, accountLimit: 10 });
    const body = () => bytes(JSON.stringify({ data: rows(3_000) }));
    const parse = (account: string) => p.parse(body(), account).then(() => void order.push(account));
    // One thread: the first body is taken at once, the others wait and are ordered when it frees.
    await Promise.all([
      parse('greedy'),
      parse('greedy'),
      parse('greedy'),
      parse('greedy'),
      parse('other'),
      parse('third'),
    ]);
    expect(order).toEqual(['greedy', 'other', 'third', 'greedy', 'greedy', 'greedy']);
  });

  it('refuses with 503 when the waiting line is full', async () => {
    const { pool: p } = pool({ threads: 1, queueLimit: 1 });
    const body = () => bytes(JSON.stringify({ data: rows(5_000) }));
    const running = p.parse(body(), 'a');
    const waiting = p.parse(body(), 'b');
    expect(await rejection(p.parse(body(), 'c'))).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect((await Promise.all([running, waiting])).map((o) => o.kind)).toEqual(['parsed', 'parsed']);
    expect(p.stats()).toMatchObject({ running: 0, waiting: 0 });
  });

  it('refuses a body whose parse would need more memory than allowed (413) without parsing it, then parses the next on the same thread', async () => {
    const { pool: p, outcomes } = pool({ memoryMb: 64 });
    // ~12 MB of empty arrays: several hundred MB of heap once parsed. Refused by its estimate: a parse
    // that met the thread's heap cap could end the whole process (json-heap-estimate.ts).
    const hungry = bytes(`[${'[],'.repeat(4_000_000)}[]]`);
    const error = await rejection(p.parse(hungry, 'acct'));
    expect(error).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      message: expect.stringContaining('PRESSROOM_BODY_LIMIT_BYTES'),
    });
    const next = await p.parse(bytes(JSON.stringify({ data: rows(5_000) })), 'acct');
    expect(next.kind).toBe('parsed');
    expect(outcomes).toEqual(['refused', 'parsed']);
    expect(p.stats().threads).toBe(1);
  });

  // Bodies of the costliest shapes, each as large as the estimate lets through a 96 MB thread: every one
  // parses there, so a body the estimate accepts never reaches the thread's heap cap.
  const costliest: Record<string, (n: number) => string> = {
    'empty arrays': (n) => `[${'[],'.repeat(n)}[]]`,
    'empty objects': (n) => `[${'{},'.repeat(n)}{}]`,
    'arrays 30 deep': (n) => `[${`${'['.repeat(30)}${']'.repeat(30)},`.repeat(n)}[]]`,
    'an object of distinct keys': (n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`,
    'two-byte strings': (n) => `[${'"abcdefghijklmnopqrstuvwxyz漢",'.repeat(n)}""]`,
  };
  for (const [shape, make] of Object.entries(costliest)) {
    it(`parses ${shape} as large as the estimate allows within the thread's cap`, async () => {
      const memoryMb = 96;
      const allowed = parseHeapBytes(memoryMb);
      const perItem = jsonParseHeapEstimate(bytes(make(1000))) / 1000;
      let n = Math.floor(allowed / perItem);
      while (jsonParseHeapEstimate(bytes(make(n))) > allowed) n = Math.floor(n * 0.98);
      const { pool: p, outcomes } = pool({ memoryMb });
      const outcome = await p.parse(bytes(make(n)), 'acct');
      expect(outcome.kind).toBe('parsed');
      expect(outcomes).toEqual(['parsed']);
      // One item more than the estimate allows is refused, not parsed.
      let over = n + 1;
      while (jsonParseHeapEstimate(bytes(make(over))) <= allowed) over = Math.ceil(over * 1.01);
      expect(await rejection(p.parse(bytes(make(over)), 'acct'))).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    });
  }
});
