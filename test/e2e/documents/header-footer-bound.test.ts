/**
 * Issue 37, case 1: an asset used many times in a header or footer. Chromium's header loads
 * nothing, so every use is written into it as the asset's whole `data:` URI; 350 uses of a 10 MiB
 * asset once took the process to 6.8 GB and ended it. Against a real `pressroom serve` process
 * (dist/, SQLite) whose V8 heap is capped, so that building such a header would end it at once:
 * each attack is a 422 naming the bound, the process answers /healthz all along and afterwards,
 * nothing is charged, and a header that uses its images within the bound still prints them.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster, type HttpResponse, type PressroomProcess } from '../../support/cluster.js';
import { noisePng } from '../../support/documents/png-images.js';
import { pdfTool } from '../../support/documents/pdf-tools.js';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** The issue's `amp10.png`: PNG magic, then random bytes, 10 MiB in all (the default per-asset bound). */
const AMP10 = Buffer.concat([PNG_MAGIC, randomBytes(10 * 1024 * 1024 - PNG_MAGIC.length)]);
/** The second attack: a 256 KiB asset of the same kind. */
const AMP256 = Buffer.concat([PNG_MAGIC, randomBytes(256 * 1024 - PNG_MAGIC.length)]);
/** A real 296 × 296 image of ~257 KiB (noise does not compress): ten uses fit the bound. */
const LOGO = noisePng(296, 296);

const uses = (name: string, n: number) =>
  `{% for i in range(${n}) %}<i style="background:url({{ asset('${name}') }})"></i>{% endfor %}h`;

describe('an asset used many times in a header or footer (issue 37), against a real service process', () => {
  let cluster: Cluster;
  let serve: PressroomProcess;
  let exited = false;
  let account: { accountId: string; apiKey: string };

  const api = (method: string, path: string, body?: unknown) =>
    serve.request(method, path, { apiKey: account.apiKey, body });
  /** Saves a template with this page setup and generates it as bytes. */
  async function generate(page: Record<string, unknown>): Promise<HttpResponse> {
    const created = await api('POST', '/v1/templates', { name: 'Issue 37', html: '<p>Body</p>', page });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return whileAnswering(() =>
      api('POST', '/v1/pdf/create', { template_id: created.body.id, data: {}, export_type: 'binary' }),
    );
  }
  const balance = async () => (await api('GET', '/v1/account')).body.credits as number;

  /** Runs `request` while asking /healthz over and over; every ask must be answered 200. */
  async function whileAnswering(request: () => Promise<HttpResponse>): Promise<HttpResponse> {
    const health: number[] = [];
    let done = false;
    const poll = (async () => {
      while (!done) {
        health.push(
          await serve.request('GET', '/healthz').then(
            (r) => r.status,
            () => 0,
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      return await request();
    } finally {
      done = true;
      await poll;
      expect(health.length).toBeGreaterThan(0);
      expect(
        health.every((status) => status === 200),
        `/healthz answers: ${health.join(',')}`,
      ).toBe(true);
      expect(exited).toBe(false);
    }
  }

  beforeAll(async () => {
    cluster = await startCluster({
      alls: 1,
      database: 'sqlite',
      storage: 'local',
      // A heap far below the 4.9 GB the 350-use header once needed: building it ends the process.
      env: { NODE_OPTIONS: '--max-old-space-size=768', PRESSROOM_RENDER_CONCURRENCY: '1' },
    });
    serve = cluster.alls[0]!;
    void serve.exited.then(() => (exited = true));
    account = await cluster.createAccount({ credits: 10, plan: 'enterprise' });
    for (const [name, bytes] of [
      ['amp10.png', AMP10],
      ['amp256.png', AMP256],
      ['logo.png', LOGO],
    ] as const) {
      const res = await api('POST', '/v1/assets', { name, content_base64: bytes.toString('base64') });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
  }, 240_000);
  afterAll(async () => cluster?.close());

  it('a free preview whose header uses a 10 MiB asset 350 times: 422 naming the bound, the process up', async () => {
    const res = await whileAnswering(() =>
      api('POST', '/v1/templates/preview', {
        html: '<p>Body</p>',
        page: { header_html: uses('amp10.png', 350), margin: { top: '20mm' } },
      }),
    );
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(422);
    expect(res.body).toMatchObject({ error: 'DOCUMENT_TOO_LARGE', bound: 'header_footer', part: 'header' });
    expect(res.body.message).toMatch(
      /^The page header \(page\.header_html\) would be \d+ characters \(4\.\d GiB\) once its images and fonts are written into it, more than the 4194304 \(4 MiB\) a header or footer may carry/,
    );
  }, 120_000);

  it.each([2_000, 14_000])(
    'a generated PDF whose footer uses a 256 KiB asset %i times: 422 naming the bound, not charged',
    async (n) => {
      const before = await balance();
      const res = await generate({ footer_html: uses('amp256.png', n), margin: { bottom: '20mm' } });
      expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(422);
      expect(res.body).toMatchObject({ error: 'DOCUMENT_TOO_LARGE', bound: 'header_footer', part: 'footer' });
      expect(res.body.message).toContain('more than the 4194304 (4 MiB) a header or footer may carry');
      expect(await balance()).toBe(before);
    },
    120_000,
  );

  it('a header using a 257 KiB image ten times is within the bound: printed, every use, and charged once', async () => {
    const before = await balance();
    const header = `{% for i in range(10) %}<img src="{{ asset('logo.png') }}" style="width:8px;height:8px">{% endfor %}`;
    const res = await generate({ header_html: header, margin: { top: '20mm' } });
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
    const logos = pdfTool('pdfimages', res.bytes, ['-list'])
      .split('\n')
      .filter((row) => /^\s*1\s+\d+\s+image\s+296\s+296\s/.test(row));
    expect(logos).toHaveLength(10);
    expect(await balance()).toBe(before - 1);
  }, 120_000);

  it('the same process answers afterwards', async () => {
    expect((await serve.request('GET', '/healthz')).status).toBe(200);
    expect(exited).toBe(false);
  });
});
