/**
 * Issue 42: `/mcp` on the service, driven by the MCP SDK's own client over HTTP, as Claude Desktop or an
 * IDE assistant would: the tools listed with descriptions and schemas; an assistant authoring a template
 * (create, preview as a PNG it can look at, update, publish); generating (a link whose PDF has the data),
 * async jobs, a PDF tool, the account; charges exactly as the API charges; refusals as tool errors that
 * name the field; another account's template out of reach; no key, no session. SQLite only: the tools
 * are API calls, whose storage the other files test on both databases.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageInfo, noisePng } from '../../support/documents/image-tools.js';
import { pdfInfo, pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

type ToolResult = {
  isError?: boolean;
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
};

describe('the MCP endpoint (/mcp)', () => {
  let t: TestApp;
  let alice: { accountId: string; apiKey: string };
  let bob: { accountId: string; apiKey: string };
  const clients: Client[] = [];

  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'pressroom-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`), { requestInit: { headers } }));
    clients.push(client);
    return client;
  }
  const tool = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  const json = (result: ToolResult) => {
    expect(result.isError, result.content[0]?.text).toBeFalsy();
    return JSON.parse(result.content[0]!.text!) as Record<string, any>;
  };
  const credits = async (apiKey: string) => (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const download = async (url: string) => {
    const link = new URL(url);
    return (await t.request('GET', link.pathname + link.search)).bytes;
  };

  beforeAll(async () => {
    t = await startTestApp('sqlite', { PRESSROOM_JOB_POLL_MS: '100' });
    t.services.startWorkers();
    alice = await t.createAccount({ credits: 10, plan: 'enterprise' });
    bob = await t.createAccount({ credits: 10, plan: 'enterprise' });
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await t?.close();
  });

  it('needs a valid API key (x-api-key or Bearer): without one, 401 and no session', async () => {
    await expect(connect({})).rejects.toThrow(/UNAUTHORIZED/);
    await expect(connect({ 'x-api-key': `pr_${'x'.repeat(48)}` })).rejects.toThrow(/UNAUTHORIZED/);
    const raw = await fetch(`${t.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(raw.status).toBe(401);
    const bearer = await connect({ authorization: `Bearer ${alice.apiKey}` });
    expect(json(await tool(bearer, 'get_account_info')).credits).toBe(10);
  });

  it('lists its tools with descriptions and input schemas, its resources and its prompt', async () => {
    const client = await connect({ 'x-api-key': alice.apiKey });
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([
      'cancel_batch',
      'create_template',
      'generate_image',
      'generate_pdf',
      'generate_pdf_async',
      'get_account_info',
      'get_batch_status',
      'get_pdf_job_status',
      'get_template',
      'get_template_fields',
      'get_template_layers',
      'list_pdf_jobs',
      'list_templates',
      'list_transactions',
      'preview_template',
      'publish_template_version',
      'run_pdf_tool',
      'start_batch',
      'update_template',
    ]);
    for (const x of tools) {
      expect(x.description, x.name).toMatch(/\w{3,}/);
      expect(x.inputSchema.type).toBe('object');
    }
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain('pressroom://templates');
    const prompt = await client.getPrompt({
      name: 'make_template',
      arguments: { description: 'a certificate of attendance' },
    });
    expect(JSON.stringify(prompt.messages)).toContain('a certificate of attendance');
  });

  it('lets an assistant author a template: create, preview page 1 as a PNG (free), update, publish, read it as a resource', async () => {
    const client = await connect({ 'x-api-key': alice.apiKey });
    const before = await credits(alice.apiKey);
    const created = json(
      await tool(client, 'create_template', {
        name: 'Certificate',
        html: '<h1>Certificate for {{ name }}</h1><p>{{ course }}</p>',
        sample_data: { name: 'Ada', course: 'Engines' },
      }),
    );
    expect(created.id).toHaveLength(12);
    const fields = json(await tool(client, 'get_template_fields', { template_id: created.id }));
    expect(JSON.stringify(fields)).toContain('course');

    const preview = await tool(client, 'preview_template', { template_id: created.id });
    expect(preview.isError, preview.content[0]?.text).toBeFalsy();
    const image = preview.content.find((part) => part.type === 'image')!;
    expect(image.mimeType).toBe('image/png');
    expect(imageInfo(Buffer.from(image.data!, 'base64'))).toMatchObject({ format: 'png', width: 800 });

    json(
      await tool(client, 'update_template', {
        template_id: created.id,
        html: '<h1>Certificate of attendance for {{ name }}</h1><p>{{ course }}</p>',
      }),
    );
    expect(json(await tool(client, 'publish_template_version', { template_id: created.id, tag: 'v1' }))).toMatchObject({
      version_number: 1,
      tag: 'v1',
    });
    const resource = await client.readResource({ uri: `pressroom://templates/${created.id}` });
    expect(JSON.stringify(resource.contents)).toContain('Certificate of attendance');
    expect(await credits(alice.apiKey)).toBe(before);
  });

  it('generates a PDF as a link, charged once like the API; a refusal is a tool error naming the field, charged nothing', async () => {
    const client = await connect({ 'x-api-key': alice.apiKey });
    const template = json(
      await tool(client, 'create_template', {
        name: 'Invoice',
        html: '<h1>Invoice {{ number }}</h1><p>{{ customer.name }}</p>',
      }),
    );
    const before = await credits(alice.apiKey);
    const made = json(
      await tool(client, 'generate_pdf', {
        template_id: template.id,
        data: { number: 'INV-7', customer: { name: 'Grace Hopper' } },
      }),
    );
    expect(made).toMatchObject({ credits_remaining: before - 1, filename: 'document.pdf' });
    expect(pdfText(await download(made.url))).toContain('Grace Hopper');
    expect(await credits(alice.apiKey)).toBe(before - 1);
    const ledger = json(await tool(client, 'list_transactions', { limit: 5 }));
    expect(ledger.transactions[0]).toMatchObject({ transaction_type: 'PDFGEN', template_id: template.id });

    // Refused by the API (its own validation), and by the tool's input schema before any call.
    const refused = await tool(client, 'generate_pdf', {
      template_id: template.id,
      data: { number: 'x' },
      filename: 'bad name!',
    });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toMatch(/HTTP 422[\s\S]*- filename: /);
    const outOfRange = await tool(client, 'generate_pdf', {
      template_id: template.id,
      data: { number: 'x' },
      expiration: 59,
    });
    expect(outOfRange.isError).toBe(true);
    expect(outOfRange.content[0]!.text).toContain('expiration');
    const missing = await tool(client, 'generate_pdf', { template_id: 'AAAAAAAAAAAA', data: {} });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toContain('TEMPLATE_NOT_FOUND');
    expect(await credits(alice.apiKey)).toBe(before - 1);

    // The PDF tools, by URL: the generated document rotated.
    const rotated = json(
      await tool(client, 'run_pdf_tool', { tool: 'rotate', arguments: { pdf_url: made.url, rotation: 90 } }),
    );
    expect(pdfInfo(await download(rotated.url), ['-f', '1', '-l', '1'])['Page    1 rot']).toBe('90');
    expect(await credits(alice.apiKey)).toBe(before - 2);
  });

  it('queues a job and follows it to its result', async () => {
    const client = await connect({ 'x-api-key': alice.apiKey });
    const template = json(await tool(client, 'create_template', { name: 'Letter', html: '<p>Dear {{ name }},</p>' }));
    const queued = json(
      await tool(client, 'generate_pdf_async', { template_id: template.id, data: { name: 'Katherine' } }),
    );
    const done = await until(
      async () => {
        const job = json(await tool(client, 'get_pdf_job_status', { job_id: queued.job_id }));
        return job.status === 'completed' || job.status === 'failed' ? job : undefined;
      },
      120_000,
      'the job',
    );
    expect(done.status).toBe('completed');
    expect(pdfText(await download(done.result_url))).toContain('Dear Katherine');
    expect(
      json(await tool(client, 'list_pdf_jobs', { limit: 10 })).jobs.map((job: { id: string }) => job.id),
    ).toContain(queued.job_id);
  });

  it('starts a batch of two rows and reads its items; a bad row is a tool error naming it', async () => {
    const client = await connect({ 'x-api-key': alice.apiKey });
    const template = json(await tool(client, 'create_template', { name: 'Badge', html: '<p>Badge of {{ name }}</p>' }));
    const bad = await tool(client, 'start_batch', { template_id: template.id, items_csv: 'name,extra\n"unclosed,1\n' });
    expect(bad.isError).toBe(true);
    const started = json(
      await tool(client, 'start_batch', {
        template_id: template.id,
        items: [{ data: { name: 'Ada' } }, { data: { name: 'Grace' }, filename: 'grace' }],
      }),
    );
    expect(started.total).toBe(2);
    await until(
      async () => json(await tool(client, 'get_batch_status', { batch_id: started.batch_id })).status === 'completed',
      120_000,
      'the batch',
    );
    const items = json(await tool(client, 'get_batch_status', { batch_id: started.batch_id, items: true })).items;
    expect(items.map((i: { filename: string }) => i.filename)).toEqual(['document-1.pdf', 'grace.pdf']);
    expect(pdfText(await download(items[1].url))).toContain('Badge of Grace');
  });

  it('previews a page past the bounds as a bounded picture, free: an 800 × 20,000 px page of noise whole within 800 × 1600 px, a page of noise as a JPEG under 1 MiB; a page too long to print is refused when saved (issue 49)', async () => {
    const client = await connect({ 'x-api-key': alice.apiKey });
    const before = await credits(alice.apiKey);
    // A 256-pixel tile of noise (~263 KB as the template's CSS) repeated over the whole page: what compresses least.
    const css = `html,body{margin:0;height:100%} div{height:100%;background:url(data:image/png;base64,${noisePng(256, 256).toString('base64')}) repeat}`;
    const noise = (height: string) =>
      t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: {
          name: `Noise ${height}`,
          html: '<div></div>',
          css,
          page: { width: '800px', height, margin: { top: '0', right: '0', bottom: '0', left: '0' } },
        },
      });
    for (const [height, shape] of [
      ['20000px', { format: 'png', width: 64, height: 1600 }],
      ['1600px', { format: 'jpeg', width: 800, height: 1600 }],
    ] as const) {
      const template = await noise(height);
      expect(template.status, JSON.stringify(template.body).slice(0, 300)).toBe(201);
      const preview = await tool(client, 'preview_template', { template_id: template.body.id });
      expect(preview.isError, preview.content[0]?.text).toBeFalsy();
      const image = preview.content.find((part) => part.type === 'image')!;
      const bytes = Buffer.from(image.data!, 'base64');
      expect(image.mimeType).toBe(`image/${shape.format}`);
      expect(imageInfo(bytes)).toEqual(shape);
      expect(bytes.length).toBeLessThanOrEqual(1024 * 1024);
      expect(preview.content.find((part) => part.type === 'text')!.text).toContain(
        `${shape.width} × ${shape.height} px`,
      );
    }
    expect((await t.request('GET', '/healthz')).status).toBe(200);
    // Chromium prints no page past 910 in: refused with the reason where the size is chosen, never a 500 later.
    const tooLong = await noise('100000px');
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'page', 'height'], msg: expect.stringContaining('at most 900in') }),
    ]);
    expect(await credits(alice.apiKey)).toBe(before);
  });

  it("a tool left without data renders the template's sample data (of the version asked for), or {}; generate_image on a pdf template skips its modifications with a warning each (issue 50)", async () => {
    const carol = await t.createAccount({ credits: 20, plan: 'enterprise' });
    const client = await connect({ 'x-api-key': carol.apiKey });
    const template = json(
      await tool(client, 'create_template', {
        name: 'Greeting',
        html: '<h1>Hello {{ name }}</h1>',
        sample_data: { name: 'Ada Lovelace' },
      }),
    );
    json(await tool(client, 'publish_template_version', { template_id: template.id, tag: 'v1' }));
    json(await tool(client, 'update_template', { template_id: template.id, sample_data: { name: 'Grace Hopper' } }));
    const before = await credits(carol.apiKey);
    expect(
      pdfText(await download(json(await tool(client, 'generate_pdf', { template_id: template.id })).url)),
    ).toContain('Hello Grace Hopper');
    expect(
      pdfText(
        await download(json(await tool(client, 'generate_pdf', { template_id: template.id, version: 'v1' })).url),
      ),
    ).toContain('Hello Ada Lovelace');
    expect(
      pdfText(await download(json(await tool(client, 'generate_pdf', { template_id: template.id, version: 1 })).url)),
    ).toContain('Hello Ada Lovelace');
    const bare = json(await tool(client, 'create_template', { name: 'Bare', html: '<p>Plain text</p>' }));
    expect(pdfText(await download(json(await tool(client, 'generate_pdf', { template_id: bare.id })).url))).toContain(
      'Plain text',
    );
    const queued = json(await tool(client, 'generate_pdf_async', { template_id: template.id }));
    const done = await until(
      async () => {
        const job = json(await tool(client, 'get_pdf_job_status', { job_id: queued.job_id }));
        return job.status === 'completed' || job.status === 'failed' ? job : undefined;
      },
      120_000,
      'the job',
    );
    expect(pdfText(await download(done.result_url))).toContain('Hello Grace Hopper');

    const image = json(
      await tool(client, 'generate_image', {
        template_id: template.id,
        width: 400,
        modifications: [{ name: 'headline', text: 'Winter sale' }],
      }),
    );
    expect(image.warnings).toEqual([
      expect.stringMatching(/^Layer "headline" was not found: .*its modification was skipped/),
    ]);
    expect(imageInfo(await download(image.url))).toMatchObject({ format: 'png', width: 400 });
    expect(await credits(carol.apiKey)).toBe(before - 6);

    // A version that does not exist: the API's own refusal, as a tool error in the documented shape, charged nothing.
    const missing = await tool(client, 'generate_pdf', { template_id: template.id, version: 'v9' });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(/^HTTP 404 VERSION_NOT_FOUND: /);
    expect(await credits(carol.apiKey)).toBe(before - 6);
  });

  it("does not reach another account's template", async () => {
    const mine = json(
      await tool(await connect({ 'x-api-key': alice.apiKey }), 'create_template', {
        name: 'Private',
        html: '<p>{{ secret }}</p>',
      }),
    );
    const other = await connect({ 'x-api-key': bob.apiKey });
    for (const name of ['get_template', 'generate_pdf', 'preview_template']) {
      const res = await tool(other, name, {
        template_id: mine.id,
        ...(name === 'generate_pdf' ? { data: { secret: 'x' } } : {}),
      });
      expect(res.isError, name).toBe(true);
      expect(res.content[0]!.text, name).toMatch(/HTTP (403|404)/);
    }
    expect(json(await tool(other, 'list_templates')).templates.map((x: { id: string }) => x.id)).not.toContain(mine.id);
    await expect(other.readResource({ uri: `pressroom://templates/${mine.id}` })).rejects.toThrow(/Template /);
    expect(await credits(bob.apiKey)).toBe(10);
  });
});
