/**
 * What an assistant can do through `/mcp` (docs/mcp.md): find templates and their fields, generate
 * (a signed link, never bytes inside JSON), follow jobs, read the account, run the PDF tools, and
 * author templates itself — create, update, publish a version, and preview a page as an image it can
 * look at. Each tool is one call of the public API (api-caller.ts); a refusal comes back as a tool
 * error that says what to change.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { pagePreview, type PagePicture, type PreviewBounds } from '../../pdf/page-image.js';
import { AppError, ValidationError } from '../../shared/errors.js';
import { STATUS_BY_CODE } from '../errors.js';
import type { ApiAnswer, ApiCaller } from './api-caller.js';

/**
 * A preview's page picture (issue 49): an A4 page at 800 px wide is enough to read body text; a page
 * taller than 2:1 is shown whole, narrower, within 800 × 1600 px; past 1 MiB (a photo, noise) it is a
 * JPEG, then a smaller one. So an answer stays under ~1.4 MB of base64 whatever the page, where an
 * 800 × 20,000 px page of noise made a 25 MB answer.
 */
const PREVIEW_BOUNDS: PreviewBounds = { maxWidth: 800, maxHeight: 1600, maxBytes: 1024 * 1024 };
/** The PDF tools an assistant may run (docs/pdf-tools.md); each is `POST /v1/pdf-tools/<tool>`. */
const PDF_TOOLS = [
  'merge',
  'extract-pages',
  'rotate',
  'split',
  'flatten',
  'watermark',
  'metadata',
  'sign',
  'verify',
  'protect',
  'unlock',
] as const;

const templateId = z.string().length(12).describe('A template id (12 characters), from list_templates');
const data = z
  .record(z.string(), z.unknown())
  .optional()
  .describe(
    'Values for the template\'s {{ variables }}, e.g. {"customer": {"name": "Ada"}}; get_template_fields lists them. Left out: the template\'s sample_data (of the version asked for), or {}',
  );
const version = z
  .union([z.string(), z.number().int()])
  .optional()
  .describe("A published version's tag or number; left out: the current draft");

export interface ToolContext {
  api: ApiCaller;
  accountId: string;
}

/** A tool's answer: the API's JSON, pretty-printed. */
function answer(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

/** A refusal as a tool error: the API's code, its message and the fields at fault, so the model can fix the call. */
function refusal(res: ApiAnswer): CallToolResult {
  const body = (res.body ?? {}) as {
    error?: string;
    message?: string;
    detail?: { loc: (string | number)[]; msg: string }[];
  };
  const lines = [
    `HTTP ${res.status}${body.error ? ` ${body.error}` : ''}: ${body.message ?? (body.detail ? 'the request has invalid fields' : res.bytes.toString('utf8', 0, 300))}`,
  ];
  for (const d of body.detail ?? []) lines.push(`- ${d.loc.filter((part) => part !== 'body').join('.')}: ${d.msg}`);
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }] };
}

/** An error of the service's own work in a tool (not an API call), as the same tool error. */
function errorRefusal(error: unknown): CallToolResult {
  if (error instanceof ValidationError)
    return refusal({ status: 422, body: { detail: error.issues }, bytes: Buffer.alloc(0), headers: {} });
  if (error instanceof AppError)
    return refusal({
      status: STATUS_BY_CODE[error.code],
      body: { error: error.code, message: error.message },
      bytes: Buffer.alloc(0),
      headers: {},
    });
  throw error;
}

/**
 * A tool's `data`, or, left out, the template's sample data (the version's, when one is asked for), or
 * `{}` when it has none (issue 50: the tools declare `data` optional; the API requires it). A template or
 * version that cannot be read gives `{}`: the call that follows answers the API's own refusal.
 */
async function dataOrSample(
  api: ApiCaller,
  input: { template_id: string; version?: string | number; data?: Record<string, unknown> },
): Promise<Record<string, unknown>> {
  if (input.data !== undefined) return input.data;
  const template = `/v1/templates/${encodeURIComponent(input.template_id)}`;
  let path = template;
  if (input.version !== undefined) {
    const listed = await api('GET', `${template}/versions`);
    const versions =
      (listed.body as { versions?: { version_number: number; tag: string | null }[] } | undefined)?.versions ?? [];
    const number =
      versions.find((v) => v.tag === String(input.version))?.version_number ??
      (/^\d+$/.test(String(input.version)) ? Number(input.version) : undefined);
    if (number === undefined) return {};
    path = `${template}/versions/${number}`;
  }
  const res = await api('GET', path);
  const sample = res.status === 200 ? (res.body as { sample_data?: unknown }).sample_data : undefined;
  return sample && typeof sample === 'object' && !Array.isArray(sample) ? (sample as Record<string, unknown>) : {};
}

/** Calls the API and answers its JSON, or the refusal. */
async function call(
  api: ApiCaller,
  method: Parameters<ApiCaller>[0],
  path: string,
  body?: unknown,
): Promise<CallToolResult> {
  const res = await api(method, path, body);
  return res.status >= 200 && res.status < 300 ? answer(res.body ?? {}) : refusal(res);
}

/** Drops undefined fields (the API treats an absent field and null differently for some). */
function defined(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
}

const query = (params: Record<string, unknown>) => {
  const pairs = Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${encodeURIComponent(String(value))}`);
  return pairs.length > 0 ? `?${pairs.join('&')}` : '';
};

/** Registers every tool, the resources and the prompt on `server`, acting as the context's account. */
export function registerPressroomTools(server: McpServer, { api, accountId }: ToolContext): void {
  server.registerTool(
    'list_templates',
    {
      description: 'List your templates: id, name, kind (pdf or image) and dates. Start here to find a template_id.',
      inputSchema: { kind: z.enum(['pdf', 'image']).optional().describe('Only templates of this kind') },
    },
    ({ kind }) => call(api, 'GET', `/v1/templates${query({ kind })}`),
  );

  server.registerTool(
    'get_template',
    {
      description:
        "A template's source: html, css, page setup, sample_data and its fields. Read it before update_template.",
      inputSchema: { template_id: templateId },
    },
    ({ template_id }) => call(api, 'GET', `/v1/templates/${encodeURIComponent(template_id)}`),
  );

  server.registerTool(
    'get_template_fields',
    {
      description:
        'The input fields a template expects (name, type, required, label): build the `data` of generate_pdf from them.',
      inputSchema: { template_id: templateId },
    },
    ({ template_id }) => call(api, 'GET', `/v1/templates/${encodeURIComponent(template_id)}/fields`),
  );

  server.registerTool(
    'get_template_layers',
    {
      description: 'The named layers of an image template, and which modifications each accepts in generate_image.',
      inputSchema: { template_id: templateId },
    },
    ({ template_id }) => call(api, 'GET', `/v1/templates/${encodeURIComponent(template_id)}/layers`),
  );

  server.registerTool(
    'generate_pdf',
    {
      description:
        'Render a template with data into a PDF and answer a signed download link (url, expires_in). Costs 1 credit; a refusal costs nothing. Example: {"template_id": "Xq3v9TbLm2Ra", "data": {"name": "Ada"}}.',
      inputSchema: {
        template_id: templateId,
        data,
        version,
        filename: z.string().max(100).optional().describe('Download name without .pdf (letters, digits, _ . -)'),
        pdf_variant: z.enum(['pdf/a-1b', 'pdf/a-2b', 'pdf/a-3b']).optional().describe('An archival PDF/A variant'),
        expiration: z
          .number()
          .int()
          .min(60)
          .max(604800)
          .optional()
          .describe('Seconds the link stays valid (default 86400)'),
        watermark: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('e.g. {"text": "DRAFT", "opacity": 0.2} (docs/finishing.md)'),
        metadata: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('e.g. {"title": "Invoice 42", "author": "Acme"}'),
        sign: z
          .record(z.string(), z.unknown())
          .optional()
          .describe(
            'e.g. {"certificate": "company-seal", "reason": "Approved"}; certificates are uploaded with POST /v1/certificates',
          ),
        protect: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('e.g. {"owner_password": "…", "permissions": {"printing": "high"}}'),
      },
    },
    async (input) =>
      call(api, 'POST', '/v1/pdf/create', {
        ...defined(input),
        data: await dataOrSample(api, input),
        export_type: 'url',
      }),
  );

  server.registerTool(
    'generate_image',
    {
      description:
        'Render an image template (its layers changed by `modifications`), or a page of a pdf template, as PNG/JPEG/WebP and answer a signed link. Costs 1 credit. Example: {"template_id": "Xq3v9TbLm2Ra", "modifications": [{"name": "headline", "text": "Summer sale"}]}.',
      inputSchema: {
        template_id: templateId,
        data,
        version,
        modifications: z
          .array(z.record(z.string(), z.unknown()))
          .optional()
          .describe(
            'Image templates: [{name, text?, image_url?, color?, background?, hidden?}], names from get_template_layers',
          ),
        format: z
          .enum(['png', 'jpeg', 'webp'])
          .optional()
          .describe("png (default), jpeg or webp (a pdf template's page: png or jpeg)"),
        width: z.number().int().min(100).max(4000).optional().describe('Pixel width; the height follows'),
        page: z.number().int().min(1).optional().describe("A pdf template's page to picture (default 1)"),
        filename: z.string().max(100).optional(),
      },
    },
    async (input) =>
      call(api, 'POST', '/v1/image/create', {
        ...defined(input),
        data: await dataOrSample(api, input),
        export_type: 'url',
      }),
  );

  server.registerTool(
    'generate_pdf_async',
    {
      description:
        'Queue a PDF as a job (for long documents) and answer its job_id; follow it with get_pdf_job_status. Costs 1 credit, refunded if the job fails.',
      inputSchema: {
        template_id: templateId,
        data,
        version,
        filename: z.string().max(100).optional(),
        pdf_variant: z.enum(['pdf/a-1b', 'pdf/a-2b', 'pdf/a-3b']).optional(),
        webhook_url: z
          .string()
          .url()
          .optional()
          .describe('A public HTTPS URL that receives pdf.completed / pdf.failed'),
        webhook_secret: z.string().min(16).optional().describe('Signs the webhook (with webhook_url)'),
      },
    },
    async (input) =>
      call(api, 'POST', '/v1/pdf/create-async', { ...defined(input), data: await dataOrSample(api, input) }),
  );

  server.registerTool(
    'get_pdf_job_status',
    {
      description: "A job's status (pending, processing, completed, failed) and, once completed, its result_url.",
      inputSchema: { job_id: z.string().min(1).describe('The job_id generate_pdf_async answered') },
    },
    ({ job_id }) => call(api, 'GET', `/v1/pdf/jobs/${encodeURIComponent(job_id)}`),
  );

  server.registerTool(
    'list_pdf_jobs',
    {
      description: 'Your jobs, newest first.',
      inputSchema: {
        status: z.enum(['pending', 'processing', 'completed', 'failed']).optional(),
        limit: z.number().int().min(1).max(100).optional(),
        offset: z.number().int().min(0).optional(),
      },
    },
    (input) => call(api, 'GET', `/v1/pdf/jobs${query(input)}`),
  );

  server.registerTool(
    'start_batch',
    {
      description:
        'Many documents from one template in one call (docs/batches.md): one item per document, each {data, filename?}; every row is checked against the ' +
        "template's fields first (an error names the row and field), then 1 credit per item is reserved, refunded for items that fail or are cancelled. " +
        'output "links" (a link per item), "zip" or "merged" (one PDF). Example: {"template_id": "abc123def456", "items": [{"data": {"name": "Ada"}}, ' +
        '{"data": {"name": "Grace"}, "filename": "grace"}], "output": "zip"}. Follow it with get_batch_status.',
      inputSchema: {
        template_id: templateId,
        items: z
          .array(z.object({ data: z.record(z.string(), z.unknown()), filename: z.string().max(100).optional() }))
          .min(1)
          .optional()
          .describe('The rows (or items_csv)'),
        items_csv: z
          .string()
          .optional()
          .describe('The rows as CSV text: a header row of field keys, one row per document'),
        output: z.enum(['links', 'zip', 'merged']).optional(),
        version,
        filename: z.string().max(100).optional().describe('Name of the zip or merged PDF'),
        webhook_url: z.string().url().optional().describe('A public HTTPS URL that receives pdf.batch.completed'),
      },
    },
    (input) => call(api, 'POST', '/v1/pdf/batches', defined(input)),
  );

  server.registerTool(
    'get_batch_status',
    {
      description:
        "A batch's progress (total, completed, failed, cancelled, estimated_seconds_left) and, once done, its zip or merged PDF link; with items: true, its items with their links or errors.",
      inputSchema: {
        batch_id: z.string().min(1).describe('The batch_id start_batch answered'),
        items: z.boolean().optional().describe('Also list the items (up to 100, with links or errors)'),
        item_status: z.enum(['pending', 'processing', 'completed', 'failed', 'cancelled']).optional(),
      },
    },
    async ({ batch_id, items, item_status }) => {
      const path = `/v1/pdf/batches/${encodeURIComponent(batch_id)}`;
      if (!items) return call(api, 'GET', path);
      return call(api, 'GET', `${path}/items${query({ status: item_status })}`);
    },
  );

  server.registerTool(
    'cancel_batch',
    {
      description: "Stops a batch's items that have not started (each refunded); items rendering finish.",
      inputSchema: { batch_id: z.string().min(1) },
    },
    ({ batch_id }) => call(api, 'POST', `/v1/pdf/batches/${encodeURIComponent(batch_id)}/cancel`, {}),
  );

  server.registerTool(
    'get_account_info',
    {
      description: 'Your account: credits left, email, plan.',
      inputSchema: {},
    },
    () => call(api, 'GET', '/v1/account'),
  );

  server.registerTool(
    'list_transactions',
    {
      description: 'Your credit transactions (PDFGEN, REFUND, PURCHASE, BONUS), newest first.',
      inputSchema: { limit: z.number().int().min(1).max(1000).optional(), offset: z.number().int().min(0).optional() },
    },
    (input) => call(api, 'GET', `/v1/account/transactions${query(input)}`),
  );

  server.registerTool(
    'run_pdf_tool',
    {
      description:
        'Run a PDF tool on PDFs given by URL or base64 and answer a signed link (verify answers a report, free). Each costs 1 credit. ' +
        'Examples: {"tool": "merge", "arguments": {"pdfs": [{"pdf_url": "https://…/a.pdf"}, {"pdf_url": "https://…/b.pdf"}]}}; ' +
        '{"tool": "rotate", "arguments": {"pdf_url": "https://…", "rotation": 90}}; {"tool": "split", "arguments": {"pdf_url": "https://…", "ranges": ["1-3", "4-"]}}.',
      inputSchema: {
        tool: z.enum(PDF_TOOLS).describe("Which tool (docs/pdf-tools.md lists each one's arguments)"),
        arguments: z.record(z.string(), z.unknown()).describe("The tool's request body, as the API takes it"),
      },
    },
    ({ tool, arguments: body }) =>
      call(
        api,
        'POST',
        `/v1/pdf-tools/${tool}`,
        tool === 'verify' ? body : { ...body, export_type: body.export_type === 'zip' ? 'zip' : 'url' },
      ),
  );

  server.registerTool(
    'create_template',
    {
      description:
        'Create a template: HTML with Jinja2-style {{ variables }}, {% for %} loops and filters, plus CSS. Answers its id. Free. ' +
        'Then preview_template to see it, update_template to fix it. Example: {"name": "Invoice", "html": "<h1>Invoice {{ number }}</h1>", "sample_data": {"number": "42"}}.',
      inputSchema: {
        name: z.string().min(1).max(255),
        html: z.string().min(1).describe("The template's HTML"),
        css: z.string().optional(),
        sample_data: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('Example data: previews and generated forms use it'),
        kind: z.enum(['pdf', 'image']).optional().describe('pdf (default) or image (then give canvas)'),
        canvas: z
          .object({ width: z.number().int(), height: z.number().int() })
          .optional()
          .describe("An image template's size in pixels"),
        page: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('Page setup, e.g. {"format": "A4", "orientation": "portrait", "margin": {"top": "20mm"}}'),
      },
    },
    (input) => call(api, 'POST', '/v1/templates', defined(input)),
  );

  server.registerTool(
    'update_template',
    {
      description: "Change a template's draft (only the fields given). Free. Published versions never change.",
      inputSchema: {
        template_id: templateId,
        name: z.string().min(1).max(255).optional(),
        html: z.string().min(1).optional(),
        css: z.string().optional(),
        sample_data: z.record(z.string(), z.unknown()).optional(),
        page: z.record(z.string(), z.unknown()).optional(),
      },
    },
    ({ template_id, ...fields }) =>
      call(api, 'PUT', `/v1/templates/${encodeURIComponent(template_id)}`, defined(fields)),
  );

  server.registerTool(
    'publish_template_version',
    {
      description:
        'Freeze the template\'s draft as a version under a tag (e.g. "v1", "prod"); generate_pdf with version renders it. Free.',
      inputSchema: {
        template_id: templateId,
        tag: z.string().min(1).max(100),
        description: z.string().max(500).optional(),
      },
    },
    ({ template_id, ...fields }) =>
      call(api, 'POST', `/v1/templates/${encodeURIComponent(template_id)}/versions`, defined(fields)),
  );

  server.registerTool(
    'preview_template',
    {
      description:
        'See a page of a template as an image (stamped PREVIEW, free): a saved one by template_id (its draft, or a version), or unsaved html/css. ' +
        'Look at it, then fix the template with update_template. Warnings (undefined variables, images that did not load) come as text.',
      inputSchema: {
        template_id: templateId.optional(),
        version,
        html: z.string().min(1).optional().describe('Unsaved HTML to preview instead of a saved template'),
        css: z.string().optional(),
        data: data.describe('Values for the variables; with template_id, left out: its sample_data'),
        page: z.number().int().min(1).optional().describe('Which page to show (default 1)'),
      },
    },
    async ({ page, ...input }) => {
      const res = await api('POST', '/v1/templates/preview', defined(input));
      if (res.status !== 200) return refusal(res);
      let picture: PagePicture;
      try {
        picture = await pagePreview(res.bytes, { page: page ?? 1, accountId, bounds: PREVIEW_BOUNDS });
      } catch (error) {
        return errorRefusal(error);
      }
      const warnings = res.headers['x-pressroom-warning-details'];
      return {
        content: [
          { type: 'image', data: picture.bytes.toString('base64'), mimeType: `image/${picture.format}` },
          {
            type: 'text',
            text: `${previewNote(page ?? 1, picture)}${warnings ? ` Warnings: ${String(warnings)}` : ''}`,
          },
        ],
      };
    },
  );

  server.registerResource(
    'templates',
    'pressroom://templates',
    { description: 'Your templates (id, name, kind)', mimeType: 'application/json' },
    async (uri) => {
      const res = await api('GET', '/v1/templates');
      return {
        contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(res.body ?? {}, null, 2) }],
      };
    },
  );

  server.registerResource(
    'template',
    new ResourceTemplate('pressroom://templates/{template_id}', { list: undefined }),
    { description: "A template's source (html, css, page setup, sample data, fields)", mimeType: 'application/json' },
    async (uri, { template_id }) => {
      const res = await api('GET', `/v1/templates/${encodeURIComponent(String(template_id))}`);
      // Another account's template, or none: the API's refusal, as the protocol's "resource not found".
      if (res.status !== 200)
        throw new McpError(
          ErrorCode.InvalidParams,
          `Template ${String(template_id)}: ${(res.body as { message?: string } | undefined)?.message ?? `HTTP ${res.status}`}`,
        );
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(res.body, null, 2) }] };
    },
  );

  server.registerPrompt(
    'make_template',
    {
      description: 'Make a document template from a description',
      argsSchema: { description: z.string().describe('What the document is and what it shows') },
    },
    ({ description }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `Make a Pressroom template for: ${description}\n\n` +
              'Write HTML with Jinja2-style {{ variables }} (loops with {% for item in items %}), CSS for print (A4 unless told), and sample_data that fills every variable. ' +
              'Create it with create_template, look at page 1 with preview_template, fix what looks wrong with update_template, and preview again until it is right. ' +
              'Then tell me its template_id and the fields get_template_fields lists.',
          },
        },
      ],
    }),
  );
}

/** What the preview's picture shows, in a line the model reads beside it. */
function previewNote(
  page: number,
  picture: { format: string; width: number; height: number; page: { width: number; height: number } },
): string {
  const shown = `Page ${page} of the preview, ${picture.width} × ${picture.height} px ${picture.format.toUpperCase()}`;
  const printed = `${Math.round(picture.page.width)} × ${Math.round(picture.page.height)} pt as printed`;
  const jpeg =
    picture.format === 'jpeg'
      ? ` A JPEG: as a PNG the picture passed ${PREVIEW_BOUNDS.maxBytes / 1024 / 1024} MiB.`
      : '';
  const fitted = picture.height >= PREVIEW_BOUNDS.maxHeight && picture.width < PREVIEW_BOUNDS.maxWidth;
  return `${fitted ? `${shown}: the whole page (${printed}), scaled to fit ${PREVIEW_BOUNDS.maxWidth} × ${PREVIEW_BOUNDS.maxHeight} px.` : `${shown} (${printed}).`}${jpeg}`;
}
