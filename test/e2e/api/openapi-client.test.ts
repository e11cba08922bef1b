/**
 * The OpenAPI document as a client generator sees it, checked for every route (so routes added later
 * are held to the same rules): an operationId, summary, description and declared tag on each operation,
 * a description on every property and parameter, a request example that its own schema accepts, PDF
 * answers declared as bytes, a `servers` entry, nothing of the studio. Then a TypeScript client is
 * generated from the live document with openapi-typescript, type-checked together with calls written
 * against it, and those calls are run with openapi-fetch: account, templates (the document's own
 * example body), a PDF as a link and as bytes (the document's own example, only the id replaced).
 * Last, on both databases: unknown body fields on the create endpoints are accepted, while a known
 * field that cannot apply is refused with 422 and charges nothing.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_EXAMPLE } from '../../../src/http/examples.js';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

type Schema = Record<string, any>;
type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Schema[];
  requestBody?: Schema;
  responses?: Record<string, Schema>;
};
type OpenApiDoc = {
  servers?: { url: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
};

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']);

/** Every operation as [`METHOD /path`, operation]. */
function operationsOf(doc: OpenApiDoc): [string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]),
  );
}

/** Properties without a description, anywhere inside `schema` (nested objects, items, unions). */
function undescribedProperties(schema: unknown, where: string, out: string[]): void {
  if (!schema || typeof schema !== 'object') return;
  const s = schema as Schema;
  for (const [name, property] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
    if (!property.description) out.push(`${where}.${name}`);
    undescribedProperties(property, `${where}.${name}`, out);
  }
  if (s.items) undescribedProperties(s.items, `${where}[]`, out);
  if (s.additionalProperties && typeof s.additionalProperties === 'object')
    undescribedProperties(s.additionalProperties, `${where}{}`, out);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    ((s[key] ?? []) as Schema[]).forEach((branch, i) => undescribedProperties(branch, `${where}<${i}>`, out));
}

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');
const isText = (mediaType: string) => mediaType.startsWith('text/');

/** What the document gets wrong for a client generator; empty when nothing. */
function documentProblems(doc: OpenApiDoc): string[] {
  const problems: string[] = [];
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const declaredTags = new Set((doc.tags ?? []).map((t) => t.name));
  for (const tag of doc.tags ?? []) if (!tag.description) problems.push(`tag ${tag.name}: no description`);
  const ids = new Map<string, string>();

  for (const [name, op] of operationsOf(doc)) {
    if (!op.operationId) problems.push(`${name}: no operationId`);
    else if (ids.has(op.operationId))
      problems.push(`${name}: operationId ${op.operationId} also used by ${ids.get(op.operationId)}`);
    else ids.set(op.operationId, name);
    if (!op.summary) problems.push(`${name}: no summary`);
    if (!op.description) problems.push(`${name}: no description`);
    if (!op.tags?.length) problems.push(`${name}: no tag`);
    for (const tag of op.tags ?? [])
      if (!declaredTags.has(tag)) problems.push(`${name}: tag "${tag}" is not in the document's tags list`);
    for (const parameter of op.parameters ?? [])
      if (!parameter.description)
        problems.push(`${name}: parameter ${parameter.in} ${parameter.name} has no description`);

    const bodies = Object.entries((op.requestBody?.content ?? {}) as Record<string, Schema>);
    for (const [mediaType, media] of bodies) {
      undescribedProperties(media.schema, `${name} body`, problems);
      const examples =
        media.example !== undefined
          ? [media.example]
          : Object.values((media.examples ?? {}) as Record<string, { value: unknown }>).map((e) => e.value);
      if (examples.length === 0) problems.push(`${name}: request body (${mediaType}) has no example`);
      const validate = ajv.compile({ ...media.schema, components: doc.components });
      for (const example of examples)
        if (!validate(example))
          problems.push(`${name}: its example fails its own schema: ${ajv.errorsText(validate.errors)}`);
    }

    const responses = Object.entries(op.responses ?? {});
    // Only TemplateFox's agent operations, which Pressroom answers 501, have no success answer.
    if (!responses.some(([status]) => status.startsWith('2') || status === '501'))
      problems.push(`${name}: no success response`);
    for (const [status, response] of responses) {
      for (const [mediaType, media] of Object.entries((response.content ?? {}) as Record<string, Schema>)) {
        undescribedProperties(media.schema, `${name} ${status} ${mediaType}`, problems);
        if (!isJson(mediaType) && !isText(mediaType) && media.schema?.format !== 'binary')
          problems.push(`${name} ${status}: ${mediaType} is not declared as binary (format: binary)`);
      }
    }
    // An operation that can answer raw bytes (export_type binary) must say so, or a generated client parses them as JSON.
    const offersBinary = bodies.some(([, media]) =>
      ((media.schema?.properties?.export_type?.enum ?? []) as string[]).includes('binary'),
    );
    const ok = Object.keys((op.responses?.['200']?.content ?? {}) as Record<string, unknown>);
    if (offersBinary && !ok.some((mediaType) => !isJson(mediaType) && !isText(mediaType)))
      problems.push(`${name}: export_type binary, but 200 declares only ${ok.join(', ')}`);
  }
  for (const [componentName, schema] of Object.entries(doc.components?.schemas ?? {}))
    undescribedProperties(schema, `#/components/schemas/${componentName}`, problems);
  return problems;
}

/** TemplateFox's operationIds (the method names of its SDKs); an operation present here must use them. */
const TEMPLATEFOX_OPERATION_IDS: Record<string, string> = {
  'POST /v1/pdf/create': 'createPdf',
  'POST /v1/pdf/create-async': 'createPdfAsync',
  'GET /v1/pdf/jobs/{job_id}': 'getPdfJob',
  'GET /v1/pdf/jobs': 'listPdfJobs',
  'GET /v1/templates': 'listTemplates',
  'GET /v1/templates/{template_id}/fields': 'getTemplateFields',
  'GET /v1/templates/{template_id}/versions': 'listTemplateVersions',
  'POST /v1/templates/{template_id}/versions': 'createTemplateVersion',
  'PATCH /v1/templates/{template_id}/versions/{version_number}': 'updateTemplateVersion',
  'DELETE /v1/templates/{template_id}/versions/{version_number}': 'deleteTemplateVersion',
  'GET /v1/account': 'getAccount',
  'GET /v1/account/transactions': 'listTransactions',
  'GET /v1/integrations/s3': 'getS3Config',
  'POST /v1/integrations/s3': 'saveS3Config',
  'DELETE /v1/integrations/s3': 'deleteS3Config',
  'POST /v1/integrations/s3/test': 'testS3Connection',
  'POST /v1/agent/templates': 'createAgentTemplate',
  'GET /v1/agent/jobs/{job_id}': 'getAgentJob',
  'POST /v1/agent/templates/{template_id}/revise': 'reviseAgentTemplate',
};
/** Added by other parts of issue 14; checked when present. */
const TEMPLATEFOX_OPERATION_IDS_LATER: Record<string, string> = {
  'POST /v1/pdf-tools/merge': 'mergePdf',
  'POST /v1/pdf-tools/extract-pages': 'extractPdfPages',
  'POST /v1/pdf-tools/rotate': 'rotatePdf',
  'POST /v1/image/create': 'createImage',
  'GET /v1/templates/{template_id}/layers': 'getTemplateLayers',
};

/**
 * Calls written against the generated types: type-checked first (the @ts-expect-error lines prove the
 * types refuse what the API refuses), then run. It imports only types, so its JavaScript has no imports.
 */
const CLIENT_CALLS = `
import type createClientFunction from 'openapi-fetch';
import type { paths } from './pressroom-api';

type JsonBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
export type TemplateBody = JsonBody<'/v1/templates', 'post'>;
export type CreatePdfBody = JsonBody<'/v1/pdf/create', 'post'>;

export async function run(createClient: typeof createClientFunction, input: { baseUrl: string; apiKey: string; templateExample: TemplateBody; createPdfExample: CreatePdfBody }) {
  const client = createClient<paths>({ baseUrl: input.baseUrl, headers: { 'x-api-key': input.apiKey } });
  const before = await client.GET('/v1/account');
  const created = await client.POST('/v1/templates', { body: input.templateExample });
  if (!created.data) throw new Error('template not created: ' + JSON.stringify(created.error));
  const templateId: string = created.data.id;
  const fields = await client.GET('/v1/templates/{template_id}/fields', { params: { path: { template_id: templateId } } });
  const list = await client.GET('/v1/templates');
  const missing = await client.GET('/v1/templates/{template_id}', { params: { path: { template_id: 'zzzzzzzzzzzz' } } });
  const asUrl = await client.POST('/v1/pdf/create', { body: { ...input.createPdfExample, template_id: templateId } });
  // 200 is JSON or application/pdf (export_type binary), so the generated type says data may be the PDF text.
  const linkAnswer = typeof asUrl.data === 'object' && 'url' in asUrl.data ? asUrl.data : undefined;
  const asBytes = await client.POST('/v1/pdf/create', { body: { ...input.createPdfExample, template_id: templateId, export_type: 'binary' }, parseAs: 'arrayBuffer' });
  const after = await client.GET('/v1/account');
  const transactions = await client.GET('/v1/account/transactions', { params: { query: { limit: 10 } } });
  return {
    creditsBefore: before.data?.credits,
    creditsAfter: after.data?.credits,
    templateId,
    createdStatus: created.response.status,
    fieldKeys: (fields.data ?? []).map((field) => field.key),
    listedIds: (list.data?.templates ?? []).map((template) => template.id),
    missingError: missing.error && 'error' in missing.error ? missing.error.error : undefined,
    link: linkAnswer?.url,
    expiresIn: linkAnswer?.expires_in,
    bytes: asBytes.data,
    bytesContentType: asBytes.response.headers.get('content-type'),
    transactionTypes: (transactions.data?.transactions ?? []).map((t) => t.transaction_type),
  };
}

/** Never called: only type-checked. */
export function refusedByTheTypes(client: ReturnType<typeof createClientFunction<paths>>) {
  // @ts-expect-error template_id is required
  void client.POST('/v1/pdf/create', { body: { data: {} } });
  // @ts-expect-error export_type is url or binary
  void client.POST('/v1/pdf/create', { body: { template_id: 'Xq3v9TbLm2Ra', data: {}, export_type: 'pdf' } });
  // @ts-expect-error no such path
  void client.GET('/v1/templatez');
  // @ts-expect-error the path parameter is required
  void client.GET('/v1/templates/{template_id}/fields', {});
}
`;

/** A directory where `openapi-fetch` resolves, for the type check. */
function clientWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pressroom-openapi-client-'));
  const require = createRequire(import.meta.url);
  const fetchPackage = dirname(dirname(require.resolve('openapi-fetch')));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(fetchPackage, join(dir, 'node_modules', 'openapi-fetch'), 'dir');
  return dir;
}

/** Type errors of `files` compiled strictly together, as text. */
function typeErrors(files: string[]): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    skipLibCheck: true,
    types: [],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

describe('the OpenAPI document and a client generated from it', () => {
  let t: TestApp;
  let doc: OpenApiDoc;
  let workspace: string;

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body as OpenApiDoc;
    workspace = clientWorkspace();
  });
  afterAll(async () => {
    await t?.close();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('is valid OpenAPI 3.1 with this deployment as its server, listing API operations only', async () => {
    const { validate } = await import('@readme/openapi-parser');
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, JSON.stringify((result as { errors?: unknown }).errors)).toBe(true);
    expect(doc.servers?.[0]?.url).toBe(t.config.http.publicUrl);
    const paths = Object.keys(doc.paths);
    // Neither the studio's pages (`/`, `/*`), nor /docs, nor the agent catch-all.
    expect(paths.filter((p) => !p.startsWith('/v1/'))).toEqual(['/healthz', '/readyz', '/metrics']);
    expect(paths.filter((p) => p.includes('*'))).toEqual([]);
  });

  it('describes every operation, property and parameter, and gives every request body an example its schema accepts', () => {
    expect(documentProblems(doc)).toEqual([]);
    expect(operationsOf(doc).length).toBeGreaterThanOrEqual(35);
  });

  it("uses TemplateFox's operationIds, and declares the PDF answers as bytes", () => {
    const ids = Object.fromEntries(operationsOf(doc).map(([name, op]) => [name, op.operationId]));
    for (const [name, operationId] of Object.entries(TEMPLATEFOX_OPERATION_IDS))
      expect(ids[name], name).toBe(operationId);
    for (const [name, operationId] of Object.entries(TEMPLATEFOX_OPERATION_IDS_LATER))
      if (name in ids) expect(ids[name], name).toBe(operationId);
    const okTypes = (path: string, method: string) =>
      Object.keys(doc.paths[path]?.[method]?.responses?.['200']?.content ?? {}).sort();
    // application/xml: XRechnung answers (docs/einvoice.md).
    expect(okTypes('/v1/pdf/create', 'post')).toEqual(['application/json', 'application/pdf', 'application/xml']);
    expect(okTypes('/v1/templates/preview', 'post')).toEqual(['application/pdf']);
    expect(okTypes('/v1/files/{file_id}/{filename}', 'get')).toEqual([
      'application/pdf',
      'image/jpeg',
      'image/png',
      'image/webp',
    ]);
    expect(okTypes('/v1/image/create', 'post')).toEqual(['application/json', 'image/jpeg', 'image/png', 'image/webp']);
  });

  it('generates a TypeScript client with openapi-typescript that type-checks, and calls the service with it through openapi-fetch', async () => {
    const { default: openapiTS, astToString } = await import('openapi-typescript');
    writeFileSync(join(workspace, 'pressroom-api.ts'), astToString(await openapiTS(structuredClone(doc) as never)));
    writeFileSync(join(workspace, 'client-calls.ts'), CLIENT_CALLS);
    expect(typeErrors([join(workspace, 'client-calls.ts')])).toEqual([]);

    const javascript = ts.transpileModule(CLIENT_CALLS, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    writeFileSync(join(workspace, 'client-calls.mjs'), javascript);
    const { run } = (await import(pathToFileURL(join(workspace, 'client-calls.mjs')).href)) as {
      run: (...args: unknown[]) => Promise<Record<string, any>>;
    };
    const { default: createClient } = await import('openapi-fetch');

    const media = (path: string) => doc.paths[path]!.post!.requestBody!.content['application/json'];
    const { apiKey } = await t.createAccount({ credits: 10, plan: 'enterprise' });
    const result = await run(createClient, {
      baseUrl: doc.servers![0]!.url,
      apiKey,
      templateExample: media('/v1/templates').example,
      createPdfExample: media('/v1/pdf/create').example,
    });

    expect(result.createdStatus).toBe(201);
    expect(result.fieldKeys).toEqual(expect.arrayContaining(['number', 'customer.name', 'items', 'total']));
    expect(result.listedIds).toContain(result.templateId);
    expect(result.missingError).toBe('TEMPLATE_NOT_FOUND');

    // The example as a link: a real PDF with the example's data.
    expect(result.expiresIn).toBe(3600);
    const download = await fetch(result.link);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    const linked = Buffer.from(await download.arrayBuffer());
    expect(linked.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdfText(linked)).toMatch(/Invoice INV-0001[\s\S]*Ada Lovelace[\s\S]*Total: 150\.00/);

    // As bytes: the client got the PDF itself, not JSON.
    expect(result.bytesContentType).toBe('application/pdf');
    expect(result.bytes).toBeInstanceOf(ArrayBuffer);
    const bytes = Buffer.from(result.bytes as ArrayBuffer);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdfText(bytes)).toContain('Ada Lovelace');

    expect(result.creditsBefore).toBe(10);
    expect(result.creditsAfter).toBe(8);
    expect(result.transactionTypes.filter((type: string) => type === 'PDFGEN')).toHaveLength(2);
  });
});

describe.each(DOCUMENT_DIALECTS)(
  'create endpoints on %s: unknown fields accepted, known fields that cannot apply refused or ignored as TemplateFox does',
  (dialect) => {
    let t: TestApp;
    let apiKey: string;
    let templateId: string;

    const state = async () => {
      const account = await t.request('GET', '/v1/account', { apiKey });
      const transactions = await t.request('GET', '/v1/account/transactions', { apiKey });
      const jobs = await t.request('GET', '/v1/pdf/jobs', { apiKey });
      return {
        credits: account.body.credits as number,
        transactions: transactions.body.total as number,
        jobs: jobs.body.total as number,
      };
    };

    beforeAll(async () => {
      t = await startTestApp(dialect, { PRESSROOM_JOB_POLL_MS: '100' });
      t.services.startWorkers();
      ({ apiKey } = await t.createAccount({ credits: 5, plan: 'enterprise' }));
      const created = await t.request('POST', '/v1/templates', { apiKey, body: TEMPLATE_EXAMPLE });
      expect(created.status).toBe(201);
      templateId = created.body.id;
    });
    afterAll(async () => {
      await t?.close();
    });

    it('refuses, with 422 naming the field and nothing charged or queued, what could only be ignored', async () => {
      const before = await state();
      const cases: [string, Record<string, unknown>, (string | number)[]][] = [
        ['/v1/pdf/create', { export_type: 'binary', store_s3: true }, ['body', 'export_type']],
        ['/v1/image/create', { export_type: 'binary', store_s3: true }, ['body', 'export_type']],
      ];
      for (const [path, fields, loc] of cases) {
        const res = await t.request('POST', path, {
          apiKey,
          body: { template_id: templateId, data: TEMPLATE_EXAMPLE.sample_data, ...fields },
        });
        expect(res.status, `${path} ${JSON.stringify(fields)}`).toBe(422);
        expect(res.body.detail).toEqual([
          expect.objectContaining({ loc, type: 'value_error', msg: expect.stringContaining('store_s3') }),
        ]);
      }
      expect(await state()).toEqual(before);
    });

    it('accepts and ignores, with a FIELD_IGNORED warning, what TemplateFox accepts and ignores: S3 fields without store_s3, a webhook secret without a webhook', async () => {
      // TemplateFox's n8n node sends s3_filepath and s3_bucket whenever they are filled in, and webhook_secret without webhook_url.
      const before = await state();
      const res = await t.request('POST', '/v1/pdf/create', {
        apiKey,
        body: {
          template_id: templateId,
          data: TEMPLATE_EXAMPLE.sample_data,
          s3_filepath: 'invoices/2026',
          s3_bucket: 'my-bucket',
          store_s3: false,
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).not.toHaveProperty('s3_key');
      expect(res.body.warnings).toEqual(
        expect.arrayContaining([
          { code: 'FIELD_IGNORED', message: expect.stringContaining('s3_filepath') },
          { code: 'FIELD_IGNORED', message: expect.stringContaining('s3_bucket') },
        ]),
      );
      expect(
        pdfText((await t.request('GET', new URL(res.body.url).pathname + new URL(res.body.url).search)).bytes),
      ).toContain('INV-0001');

      const queued = await t.request('POST', '/v1/pdf/create-async', {
        apiKey,
        body: {
          template_id: templateId,
          data: TEMPLATE_EXAMPLE.sample_data,
          s3_bucket: 'my-bucket',
          webhook_secret: 'a-secret-of-16-chars-or-more',
        },
      });
      expect(queued.status, JSON.stringify(queued.body)).toBe(200);
      const job = await until(
        async () => {
          const polled = await t.request('GET', `/v1/pdf/jobs/${queued.body.job_id}`, { apiKey });
          return polled.body.status === 'completed' || polled.body.status === 'failed' ? polled.body : undefined;
        },
        120_000,
        'the job',
      );
      expect(job).toMatchObject({ status: 'completed', store_s3: false, result_s3_bucket: null });
      expect(
        job.warnings
          .filter((w: { code: string }) => w.code === 'FIELD_IGNORED')
          .map((w: { message: string }) => w.message.split(' ')[0])
          .sort(),
      ).toEqual(['s3_bucket', 'webhook_secret']);
      expect(await state()).toMatchObject({ credits: before.credits - 2, jobs: before.jobs + 1 });
    });

    it('accepts fields it does not know (a newer client), and treats null as not given', async () => {
      const before = await state();
      const queued = await t.request('POST', '/v1/pdf/create-async', {
        apiKey,
        body: {
          template_id: templateId,
          data: TEMPLATE_EXAMPLE.sample_data,
          s3_filepath: null,
          webhook_secret: null,
          a_field_from_the_future: { x: 1 },
        },
      });
      expect(queued.status, JSON.stringify(queued.body)).toBe(200);
      expect(queued.body).toMatchObject({ status: 'pending', credits_remaining: before.credits - 1 });
      expect(await state()).toMatchObject({ credits: before.credits - 1, jobs: before.jobs + 1 });
      if (dialect === 'sqlite') {
        // One render is enough to show the synchronous door takes them too.
        const res = await t.request('POST', '/v1/pdf/create', {
          apiKey,
          body: {
            template_id: templateId,
            data: TEMPLATE_EXAMPLE.sample_data,
            export_type: 'binary',
            another_new_option: true,
          },
        });
        expect(res.status, res.bytes.subarray(0, 200).toString()).toBe(200);
        expect(pdfText(res.bytes)).toContain('INV-0001');
      }
    });
  },
);
