/**
 * Issue 42: the n8n community package (integrations/n8n, `n8n-nodes-pressroom`) run by n8n's own
 * runtime packages against a Pressroom on loopback (test/support/n8n-runtime.ts): the credential test,
 * the template list and a template's fields as the editor offers them, generation from mapped fields and
 * from JSON (the downloaded PDFs' text), a refusal as an n8n error, two PDF tools chained, an async job
 * followed by Job → Get and by the trigger, which checks Pressroom's webhook signature. SQLite only: the
 * node makes API calls, whose storage the other files test on both databases.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfInfo, pdfPages, pdfText } from '../../support/documents/pdf-tools.js';
import { N8nRuntime, binaryBytes, type N8nItem, type N8nNodeSpec } from '../../support/n8n-runtime.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

const WEBHOOK_SECRET = 'n8n-webhook-secret-0123456789';
const INVOICE_FIELDS = [
  { key: 'number', label: 'Invoice number', type: 'string', required: true },
  { key: 'customer.name', label: 'Customer', type: 'string', required: true },
  { key: 'total', label: 'Total', type: 'number' },
  { key: 'paid', label: 'Paid', type: 'boolean' },
  { key: 'items', label: 'Items', type: 'array', spec: [{ name: 'name', label: 'Name', type: 'text' }] },
];
const INVOICE_HTML =
  '<h1>Invoice {{ number }}</h1><p>Bill to {{ customer.name }}</p><p>Total {{ total }}</p>' +
  '{% if paid %}<p>PAID</p>{% endif %}<ul>{% for item in items %}<li>{{ item.name }}</li>{% endfor %}</ul>';

describe('the n8n node (integrations/n8n) run by n8n', () => {
  let t: TestApp;
  let n8n: N8nRuntime;
  let apiKey: string;
  let invoiceId: string;
  let letterId: string;

  const credits = async () => (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const pressroom = (name: string, parameters: Record<string, unknown>): N8nNodeSpec => ({
    name,
    type: 'pressroom',
    parameters,
  });
  const onlyOutput = async (spec: N8nNodeSpec, input?: N8nItem[]) => {
    const run = await n8n.run([spec], input);
    expect(run.error).toBeUndefined();
    return run.outputs[spec.name]!;
  };
  /** Template fields as the editor stores a resource mapper: the values and the schema it offered. */
  const mapped = async (templateId: string, value: Record<string, unknown>) => ({
    mappingMode: 'defineBelow',
    value,
    matchingColumns: [],
    schema: (
      await n8n.resourceMapperFields('getTemplateFields', { resource: 'document', operation: 'generate', templateId })
    ).fields,
  });

  beforeAll(async () => {
    t = await startTestApp('sqlite', { PRESSROOM_JOB_POLL_MS: '100' });
    t.services.startWorkers();
    apiKey = (await t.createAccount({ credits: 40, plan: 'pro' })).apiKey;
    const invoice = await t.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Invoice', html: INVOICE_HTML, fields: INVOICE_FIELDS },
    });
    const letter = await t.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Letter', html: '<p>Dear {{ name }},</p>' },
    });
    expect([invoice.status, letter.status]).toEqual([201, 201]);
    [invoiceId, letterId] = [invoice.body.id, letter.body.id];
    n8n = await N8nRuntime.start();
    // A trailing slash, as people paste base URLs: the node and the credential test drop it.
    n8n.credentials = { baseUrl: `${t.baseUrl}/`, apiKey, webhookSecret: WEBHOOK_SECRET };
  });
  afterAll(async () => {
    await n8n?.close();
    await t?.close();
  });

  it('is loaded by n8n from its package.json: the Pressroom node, the trigger and the credential', () => {
    expect(n8n.known.nodes.sort()).toEqual(['n8n-nodes-pressroom.pressroom', 'n8n-nodes-pressroom.pressroomTrigger']);
    expect(n8n.known.credentials).toEqual(['pressroomApi']);
  });

  it("tests the credential with GET /v1/account: OK with the key, an error with another key or an address where Pressroom isn't", async () => {
    expect(await n8n.testCredential()).toEqual({ status: 'OK', message: 'Connection successful!' });
    const good = n8n.credentials;
    try {
      n8n.credentials = { ...good, apiKey: `pr_${'x'.repeat(48)}` };
      expect(await n8n.testCredential()).toEqual({
        status: 'Error',
        message: 'HTTP 401: Authorization failed - please check your credentials',
      });
      n8n.credentials = { ...good, baseUrl: `${t.baseUrl}/nothing-here` };
      expect(await n8n.testCredential()).toEqual({ status: 'Error', message: expect.stringContaining('HTTP 404') });
      n8n.credentials = { ...good, baseUrl: 'http://127.0.0.1:9' };
      expect((await n8n.testCredential()).status).toBe('Error');
    } finally {
      n8n.credentials = good;
    }
  });

  it("offers the account's PDF templates, a template's versions, and its fields as typed inputs", async () => {
    const image = await t.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Banner', html: '<h1>{{ title }}</h1>', kind: 'image' },
    });
    const other = await t.createAccount({ credits: 1 });
    await t.request('POST', '/v1/templates', { apiKey: other.apiKey, body: { name: 'Not yours', html: '<p>x</p>' } });
    const templates = await n8n.loadOptions('getTemplates', { resource: 'document', operation: 'generate' });
    expect(templates.map((x) => [x.name, x.value]).sort()).toEqual([
      ['Invoice', invoiceId],
      ['Letter', letterId],
    ]);
    expect(templates.map((x) => x.value)).not.toContain(image.body.id);

    expect(
      (await t.request('POST', `/v1/templates/${invoiceId}/versions`, { apiKey, body: { tag: 'v1' } })).status,
    ).toBe(200);
    const versions = await n8n.loadOptions('getTemplateVersions', {
      resource: 'document',
      operation: 'generate',
      templateId: invoiceId,
    });
    expect(versions.map((x) => x.value)).toEqual(['', 'v1']);

    const { fields } = await n8n.resourceMapperFields('getTemplateFields', {
      resource: 'document',
      operation: 'generate',
      templateId: invoiceId,
    });
    expect(fields.map((f) => [f.id, f.type, f.required])).toEqual([
      ['number', 'string', true],
      ['customer.name', 'string', true],
      ['total', 'number', false],
      ['paid', 'boolean', false],
      ['items', 'array', false],
    ]);
    expect(fields[1]!.displayName).toBe('Customer (customer.name)');
    const none = await n8n.resourceMapperFields('getTemplateFields', {
      resource: 'document',
      operation: 'generate',
      templateId: '',
    });
    expect(none).toEqual({ fields: [], emptyFieldsNotice: 'Choose a template first' });
  });

  it('generates one PDF per input item from mapped fields (expressions over the item), answers the link and downloads it', async () => {
    const before = await credits();
    const rows: N8nItem[] = [
      { json: { order: 'INV-42', customer: 'Grace Hopper', amount: 99.5, settled: true } },
      { json: { order: 'INV-43', customer: 'Alan Turing', amount: 12, settled: false } },
    ];
    const items = await onlyOutput(
      pressroom('Generate', {
        resource: 'document',
        operation: 'generate',
        templateId: invoiceId,
        dataMode: 'fields',
        templateFields: await mapped(invoiceId, {
          number: '={{ $json.order }}',
          'customer.name': '={{ $json.customer }}',
          total: '={{ $json.amount }}',
          paid: '={{ $json.settled }}',
        }),
        options: { filename: '={{ $json.order }}' },
        download: true,
      }),
      rows,
    );
    expect(items).toHaveLength(2);
    expect(items.map((x) => [x.json.filename, x.json.credits_remaining])).toEqual([
      ['INV-42.pdf', before - 1],
      ['INV-43.pdf', before - 2],
    ]);
    expect(items[0]!.json.url).toMatch(new RegExp(`^${t.baseUrl}/v1/files/`));
    expect(items[0]!.binary!.data).toMatchObject({ mimeType: 'application/pdf', fileName: 'INV-42.pdf' });
    const first = pdfText(binaryBytes(items[0]));
    expect(first).toContain('Invoice INV-42');
    expect(first).toContain('Bill to Grace Hopper');
    expect(first).toContain('Total 99.5');
    expect(first).toContain('PAID');
    const second = pdfText(binaryBytes(items[1]));
    expect(second).toContain('Bill to Alan Turing');
    expect(second).not.toContain('PAID');
    expect(await credits()).toBe(before - 2);
  });

  it('makes one batch of all input items (Generate Batch), waits for it (Batch → Get) and downloads its merged PDF; Get Items lists each document', async () => {
    const before = await credits();
    const rows: N8nItem[] = [
      { json: { order: 'B-1', customer: 'Ada Lovelace', amount: 10 } },
      { json: { order: 'B-2', customer: 'Katherine Johnson', amount: 20 } },
      { json: { order: 'B-3', customer: 'Mary Jackson', amount: 30 } },
    ];
    const [started] = await onlyOutput(
      pressroom('Batch', {
        resource: 'document',
        operation: 'generateBatch',
        templateId: invoiceId,
        dataMode: 'fields',
        templateFields: await mapped(invoiceId, {
          number: '={{ $json.order }}',
          'customer.name': '={{ $json.customer }}',
          total: '={{ $json.amount }}',
        }),
        batchOutput: 'merged',
        itemFilename: '={{ $json.order }}',
      }),
      rows,
    );
    expect(started!.json).toMatchObject({ status: 'pending', total: 3, credits_remaining: before - 3 });
    const [done] = await onlyOutput(
      pressroom('Wait', {
        resource: 'batch',
        operation: 'get',
        batchId: started!.json.batch_id,
        waitForCompletion: true,
        waitTimeoutSeconds: 120,
        download: true,
      }),
    );
    expect(done!.json).toMatchObject({ status: 'completed', completed: 3 });
    const text = pdfText(binaryBytes(done));
    expect(text).toMatch(
      /Invoice B-1[\s\S]*Bill to Ada Lovelace[\s\S]*Invoice B-2[\s\S]*Invoice B-3[\s\S]*Bill to Mary Jackson/,
    );
    const items = await onlyOutput(
      pressroom('Items', {
        resource: 'batch',
        operation: 'getItems',
        batchId: started!.json.batch_id,
        itemStatus: 'completed',
        limit: 100,
      }),
    );
    expect(items.map((x) => x.json.filename)).toEqual(['B-1.pdf', 'B-2.pdf', 'B-3.pdf']);
    expect(await credits()).toBe(before - 3);
  });

  it("generates from JSON data with a list; a refusal stops the run with Pressroom's reason and charges nothing", async () => {
    const generateJson = (options: Record<string, unknown>) =>
      pressroom('Generate', {
        resource: 'document',
        operation: 'generate',
        templateId: invoiceId,
        dataMode: 'json',
        jsonData: JSON.stringify({
          number: 'INV-50',
          customer: { name: 'Ada Lovelace' },
          items: [{ name: 'Analytical engine' }, { name: 'Punched cards' }],
        }),
        options,
        download: true,
        binaryPropertyName: 'invoice',
      });
    const [item] = await onlyOutput(generateJson({ version: 'v1' }));
    const text = pdfText(binaryBytes(item, 'invoice'));
    expect(text).toContain('Bill to Ada Lovelace');
    expect(text).toMatch(/Analytical engine[\s\S]*Punched cards/);

    const before = await credits();
    const refused = await n8n.run([generateJson({ filename: 'bad name!' })]);
    expect(refused.error).toMatch(/HTTP 422.*body\.filename/);
    const unknown = await n8n.run([
      pressroom('Generate', {
        resource: 'document',
        operation: 'generate',
        templateId: 'AAAAAAAAAAAA',
        dataMode: 'json',
        jsonData: '{}',
      }),
    ]);
    expect(unknown.error).toContain('TEMPLATE_NOT_FOUND');
    const good = n8n.credentials;
    try {
      n8n.credentials = { ...good, baseUrl: `${t.baseUrl}/studio` };
      // A wrong base URL: Pressroom answers 404 "No route" under it, and the node says the address is wrong.
      expect((await n8n.run([generateJson({})])).error).toContain('No route POST /studio/v1/pdf/create');
      const account = (await n8n.run([pressroom('Account', { resource: 'account', operation: 'get' })])).error;
      expect(account).toContain('No route GET /studio/v1/account');
      expect(account).toContain('give the address Pressroom is served at');
    } finally {
      n8n.credentials = good;
    }
    expect(await credits()).toBe(before);
  });

  it("runs docs/n8n.md's example workflow as written, on the template its curl creates", async () => {
    const doc = readFileSync(new URL('../../../docs/n8n.md', import.meta.url), 'utf8');
    const templateBody = JSON.parse(/-d '(\{"name":"Invoice".*\})'/.exec(doc)![1]!);
    const created = await t.request('POST', '/v1/templates', { apiKey, body: templateBody });
    expect(created.status).toBe(201);
    const example = [...doc.matchAll(/```json\n([\s\S]*?)\n```/g)]
      .map((m) => m[1]!)
      .find((block) => block.includes('n8n-nodes-pressroom.pressroom'))!;
    const workflow = JSON.parse(example.replace('REPLACE_ME_ID', created.body.id)) as {
      nodes: Array<{ name: string; type: string; parameters: Record<string, unknown> }>;
      connections: Record<string, { main: Array<Array<{ node: string }>> }>;
    };
    // n8n's manual trigger hands the next node one empty item; every other node must be one of ours, in the order connected.
    const trigger = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.manualTrigger')!;
    const chain: N8nNodeSpec[] = [];
    for (
      let name = workflow.connections[trigger.name]?.main[0]?.[0]?.node;
      name;
      name = workflow.connections[name]?.main[0]?.[0]?.node
    ) {
      const node = workflow.nodes.find((x) => x.name === name)!;
      expect(node.type).toMatch(/^n8n-nodes-pressroom\./);
      chain.push({ name: node.name, type: node.type.replace('n8n-nodes-pressroom.', ''), parameters: node.parameters });
    }
    expect(chain.length).toBe(workflow.nodes.length - 1);
    const run = await n8n.run(chain, [{ json: {} }]);
    expect(run.error).toBeUndefined();
    const [invoice] = run.outputs['Generate invoice']!;
    expect(invoice!.binary!.data!.fileName).toBe('INV-2026-001.pdf');
    const text = pdfText(binaryBytes(invoice));
    expect(text).toContain('Invoice INV-2026-001');
    expect(text).toContain('Bill to Ada Lovelace');
    expect(text).toMatch(/1 x Analytical engine[\s\S]*500 x Punched cards/);
  });

  it('merges a PDF from a binary property with one by URL, then rotates the result: the pages in order, turned', async () => {
    const letter = (name: string, download: boolean) =>
      pressroom('Letter', {
        resource: 'document',
        operation: 'generate',
        templateId: letterId,
        dataMode: 'json',
        jsonData: JSON.stringify({ name }),
        download,
      });
    const [withBinary] = await onlyOutput(letter('Alpha', true));
    const [linkOnly] = await onlyOutput(letter('Beta', false));
    expect(linkOnly!.binary).toBeUndefined();

    const before = await credits();
    const run = await n8n.run(
      [
        pressroom('Merge', {
          resource: 'pdfTool',
          operation: 'merge',
          sources: {
            source: [
              { inputType: 'binary', binaryPropertyName: 'data' },
              { inputType: 'url', url: linkOnly!.json.url },
            ],
          },
          toolOptions: { filename: 'bundle' },
          download: true,
        }),
        pressroom('Rotate', {
          resource: 'pdfTool',
          operation: 'rotate',
          inputType: 'binary',
          inputBinaryPropertyName: 'data',
          rotateMode: 'pages',
          pageRotations: '{"2": 180}',
          download: true,
        }),
      ],
      [withBinary!],
    );
    expect(run.error).toBeUndefined();
    const merged = binaryBytes(run.outputs.Merge![0]);
    expect(run.outputs.Merge![0]!.json.filename).toBe('bundle.pdf');
    expect(pdfPages(merged)).toBe(2);
    expect(pdfText(merged)).toMatch(/Dear Alpha,[\s\S]*Dear Beta,/);
    const rotated = binaryBytes(run.outputs.Rotate![0]);
    expect(pdfInfo(rotated, ['-f', '1', '-l', '2'])).toMatchObject({ 'Page    1 rot': '0', 'Page    2 rot': '180' });
    expect(await credits()).toBe(before - 2);
  });

  it('queues a job with the trigger as its webhook: Job → Get waits and downloads it, the trigger checks the signature and starts with the PDF', async () => {
    const trigger = await n8n.serveTrigger({
      name: 'Pressroom Trigger',
      type: 'pressroomTrigger',
      parameters: { events: ['pdf.completed', 'pdf.failed'], download: true },
    });
    const [queued] = await onlyOutput(
      pressroom('Queue', {
        resource: 'document',
        operation: 'generateAsync',
        templateId: letterId,
        dataMode: 'fields',
        templateFields: await mapped(letterId, { name: 'Katherine' }),
        webhookUrl: trigger.url,
      }),
    );
    expect(queued!.json).toMatchObject({ status: 'pending', job_id: expect.any(String) });
    const jobId = queued!.json.job_id as string;

    const [job] = await onlyOutput(
      pressroom('Job', {
        resource: 'job',
        operation: 'get',
        jobId,
        waitForCompletion: true,
        waitTimeoutSeconds: 120,
        download: true,
      }),
    );
    expect(job!.json).toMatchObject({ id: jobId, status: 'completed' });
    expect(pdfText(binaryBytes(job))).toContain('Dear Katherine,');
    const listed = await onlyOutput(
      pressroom('Jobs', { resource: 'job', operation: 'getAll', limit: 10, filters: { status: 'completed' } }),
    );
    expect(listed.map((x) => x.json.id)).toContain(jobId);

    const call = await until(async () => trigger.received[0], 60_000, 'the webhook to reach the trigger');
    expect(call.status).toBe(200);
    expect(call.items[0]!.json).toMatchObject({
      event: 'pdf.completed',
      job_id: jobId,
      status: 'completed',
      webhook_id: expect.stringMatching(/^msg_/),
    });
    expect(pdfText(binaryBytes(call.items[0]))).toContain('Dear Katherine,');
  });

  it('the trigger refuses a webhook without a valid signature (401) and starts nothing; a signed one of an event not chosen is only acknowledged', async () => {
    const trigger = await n8n.serveTrigger({
      name: 'Failures',
      type: 'pressroomTrigger',
      parameters: { events: ['pdf.failed'] },
    });
    const body = JSON.stringify({
      event: 'pdf.failed',
      job_id: 'job-1',
      status: 'failed',
      error: { code: 'TEMPLATE_RENDER_ERROR', message: 'line 1' },
    });
    const sign = (id: string, timestamp: number, payload: string, secret = WEBHOOK_SECRET) =>
      `v1,${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.${payload}`).digest('base64')}`;
    const send = async (payload: string, headers: Record<string, string>) =>
      (
        await fetch(trigger.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: payload,
        })
      ).status;
    const now = Math.floor(Date.now() / 1000);
    const headersFor = (payload: string, overrides: { secret?: string; timestamp?: number } = {}) => {
      const timestamp = overrides.timestamp ?? now;
      return {
        'webhook-id': 'msg_test',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign('msg_test', timestamp, payload, overrides.secret),
      };
    };

    expect(await send(body, { 'webhook-id': 'msg_test', 'webhook-timestamp': String(now) })).toBe(401);
    expect(await send(body, headersFor(body, { secret: 'another-secret-0123456789' }))).toBe(401);
    expect(await send(body.replace('job-1', 'job-2'), headersFor(body))).toBe(401);
    expect(await send(body, headersFor(body, { timestamp: now - 3600 }))).toBe(401);
    expect(trigger.received.every((call) => call.items.length === 0)).toBe(true);

    expect(await send(body, headersFor(body))).toBe(200);
    const completed = body.replace('pdf.failed', 'pdf.completed');
    expect(await send(completed, headersFor(completed))).toBe(200);
    await until(async () => trigger.received.length === 6 || undefined, 10_000, 'six calls');
    expect(trigger.received.map((call) => call.items.map((item) => item.json.event))).toEqual([
      [],
      [],
      [],
      [],
      ['pdf.failed'],
      [],
    ]);

    // A credential without a webhook secret cannot check anything: the call fails and starts nothing.
    const good = n8n.credentials;
    try {
      n8n.credentials = { ...good, webhookSecret: '' };
      expect(await send(body, headersFor(body))).toBe(500);
    } finally {
      n8n.credentials = good;
    }
    expect(trigger.received.at(-1)).toEqual({ status: 500, items: [] });
  });
});
