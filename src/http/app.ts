/**
 * The HTTP layer: Fastify with TypeBox schemas (validation, types and the OpenAPI 3.1 document from one
 * source), the credential → rate limit → schema order, one error handler, and the routes.
 * This folder is the only one that imports Fastify; handlers call one service each.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Services } from '../services.js';
import { registerAuth, type AuthMode } from './auth.js';
import { errorHandler, sendCodedError } from './errors.js';
import { registerBodyLimits } from './body-limits.js';
import { closeIdleConnectionsWhileClosing } from './graceful-close.js';
import { CodedError, DetailError, ValidationErrorBody } from './schemas.js';
import { checkTextParts, validatorCompiler } from './validation.js';
import { registerJsonBodyParser } from './json-body/json-body-parser.js';
import { JsonParsePool } from './json-body/json-parse-pool.js';
import { templateRoutes } from './routes/templates/templates.js';
import { accountRoutes } from './routes/account/account.js';
import { adminRoutes } from './routes/account/admin.js';
import { healthRoutes } from './routes/service/health.js';
import { metricsRoutes } from './routes/service/metrics.js';
import { withRequestId } from '../shared/log.js';
import { pdfRoutes } from './routes/documents/pdf.js';
import { fileRoutes } from './routes/documents/files.js';
import { previewRoutes } from './routes/documents/preview.js';
import { apiKeyRoutes } from './routes/account/api-keys.js';
import { s3Routes } from './routes/account/s3.js';
import { defaultStudioDir, hasStudioBuild, studioRoutes } from './routes/service/studio.js';
import { jobRoutes } from './routes/documents/jobs.js';
import { batchRoutes } from './routes/documents/batches.js';
import multipart from '@fastify/multipart';
import { einvoiceValidateRoutes } from './routes/documents/einvoice-validate.js';
import { capabilityRoutes } from './routes/service/capabilities.js';
import { templateVersionRoutes } from './routes/templates/template-versions.js';
import { agentRoutes } from './routes/account/agent.js';
import { mcpRoutes } from './mcp/mcp-route.js';
import { templateLayerRoutes } from './routes/templates/template-layers.js';
import { imageRoutes } from './routes/documents/image.js';
import { assetRoutes } from './routes/templates/assets.js';
import { pdfToolRoutes } from './routes/documents/pdf-tools.js';
import { pdfSigningRoutes } from './routes/documents/pdf-signing.js';
import { pdfAccessibilityRoutes } from './routes/documents/pdf-accessibility.js';
import { certificateRoutes } from './routes/account/certificates.js';
import { finishingToolRoutes } from './routes/documents/pdf-finishing-tools.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// ApiKeyAuth is TemplateFox's name for the x-api-key scheme, so clients generated from either document
// are configured the same way (e.g. the Python generator's `api_key['ApiKeyAuth']`).
const SECURITY_BY_AUTH: Record<AuthMode, Record<string, string[]>[] | undefined> = {
  api_key: [{ ApiKeyAuth: [] }, { HTTPBearer: [] }],
  read: [{ ApiKeyAuth: [] }, { HTTPBearer: [] }],
  admin: [{ AdminBearer: [] }],
  public: [],
};

/**
 * The document's tags, in the order /docs shows them. The first eight are TemplateFox's (its SDKs name
 * their classes after them: PDFApi, PDFAsyncApi, TemplatesApi…); the rest are Pressroom's own.
 */
const TAGS = [
  { name: 'PDF', description: 'Generate a PDF synchronously: a signed link, the bytes, or your S3 bucket. 1 credit.' },
  {
    name: 'PDF Async',
    description: 'Queue PDF jobs and follow them by polling or webhook. 1 credit, refunded on failure.',
  },
  {
    name: 'PDF Batches',
    description:
      'Many documents from one template: rows as items, CSV or NDJSON; progress, cancel, links, a zip or one merged PDF. 1 credit per item, refunded per failed or cancelled item.',
  },
  { name: 'PDF Tools', description: 'Merge, split and rotate existing PDFs. 1 credit each.' },
  { name: 'Image', description: 'Render a template to PNG, JPEG or WebP. 1 credit.' },
  {
    name: 'E-invoices',
    description:
      'Validate an e-invoice (XML, or a Factur-X / ZUGFeRD PDF) by the official EN 16931 and XRechnung rules. No credits.',
  },
  { name: 'Templates', description: 'Templates, their input fields, versions and layers. No credits.' },
  {
    name: 'Account',
    description: 'Credits, transaction history, API keys, and what this installation can do. No credits.',
  },
  { name: 'Integrations', description: 'Your own S3-compatible bucket for generated files. No credits.' },
  {
    name: 'Agent',
    description: "TemplateFox's AI template authoring: not offered by Pressroom (501 NOT_IMPLEMENTED).",
  },
  {
    name: 'Certificates',
    description:
      'Signing certificates (PKCS#12, sealed at rest) for sign on create and POST /v1/pdf-tools/sign. No credits.',
  },
  {
    name: 'Assets',
    description: "Logos, fonts and stylesheets for your templates, used with {{ asset('name') }}. No credits.",
  },
  { name: 'Files', description: 'Signed, expiring download links of generated files.' },
  {
    name: 'Admin',
    description:
      'Accounts, credits and credentials (Authorization: Bearer $PRESSROOM_ADMIN_TOKEN; absent when it is unset).',
  },
  { name: 'Operations', description: 'Liveness, readiness and Prometheus metrics for orchestrators.' },
];

async function registerOpenApi(app: FastifyInstance, options: { version: string; publicUrl: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pressroom',
        version: options.version,
        description:
          "Render PDFs from saved HTML/CSS templates with Jinja2-style variables and JSON data. The API follows TemplateFox's: " +
          'a TemplateFox client needs only another base URL and key. Send your API key in the `x-api-key` header.',
      },
      // The configured public address (PRESSROOM_PUBLIC_URL, also the base of download links), so /docs
      // "Try it out" and generated clients call this deployment.
      servers: [{ url: options.publicUrl, description: 'This Pressroom (PRESSROOM_PUBLIC_URL)' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Your API key (pr_…)' },
          HTTPBearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key, or a JWT access token on the read-only endpoints',
          },
          AdminBearer: { type: 'http', scheme: 'bearer', description: 'PRESSROOM_ADMIN_TOKEN' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => {
      const auth = (route.config as { auth?: AuthMode } | undefined)?.auth ?? 'public';
      // The studio's pages, /docs and the document itself are not API operations.
      const hidden =
        url.startsWith('/docs') || url === '/openapi.json' || (schema as { hide?: boolean } | undefined)?.hide === true;
      const named = nameWildcard(url, schema as { params?: unknown });
      return {
        schema: { ...schema, ...named.schema, hide: hidden, security: SECURITY_BY_AUTH[auth] } as typeof schema,
        url: named.url,
      };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { config: { auth: 'public' }, schema: { hide: true } as object }, async () => app.swagger());
}

/**
 * A wildcard route (`/v1/assets/*`, whose names contain `/`) as a named path parameter `{name}`:
 * generated clients cannot call a path with `{*}` in it. They send a `/` in the name as it is or
 * percent-encoded (`fonts%2Fbrand.woff2`); the route reads both the same.
 */
function nameWildcard(
  url: string,
  schema: { params?: unknown } | undefined,
): { url: string; schema: { params?: unknown } } {
  const params = schema?.params as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  if (!url.endsWith('/*') || !params?.properties?.['*']) return { url, schema: {} };
  const { '*': wildcard, ...rest } = params.properties;
  return {
    url: `${url.slice(0, -1)}:name`,
    schema: {
      params: {
        ...params,
        properties: { ...rest, name: wildcard },
        required: (params.required ?? []).map((key) => (key === '*' ? 'name' : key)),
      },
    },
  };
}

export interface BuildAppOptions {
  version?: string;
}

/**
 * Request ids, logs and metrics, shared by the API app and the worker's ops app:
 * - the request id (a valid `x-request-id` from the client, else a UUID) is logged as `req_id` and
 *   becomes the current request id of everything the request runs (shared/log.ts), so domain log
 *   lines carry it too and an async job stores it;
 * - every answer is counted by route pattern (`/v1/templates/:template_id`, never the raw URL).
 */
function registerRequestTracking(app: FastifyInstance, services: Services): void {
  // onRequest runs in the request's own async context; the body is parsed in another one (the
  // socket's), so preValidation enters it again for the handler (as @fastify/request-context does).
  app.addHook('onRequest', (request, _reply, done) => withRequestId(request.id, done));
  app.addHook('preValidation', (request, _reply, done) => withRequestId(request.id, done));
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    services.metrics.httpRequest({
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  });
}

function fastifyOptions(services: Services) {
  return {
    loggerInstance: services.logger,
    logController: new LogController({ requestIdLogLabel: 'req_id' }),
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    trustProxy: false,
    // A path that cannot be decoded (`/x%ZZ`) is refused before routing: in the service's error shape too.
    frameworkErrors: errorHandler,
  };
}

/**
 * The worker's HTTP port (`serve --role worker`): /healthz, /readyz and /metrics only, so worker
 * processes can be probed and scraped like API processes.
 */
export async function buildOpsApp(services: Services): Promise<FastifyInstance> {
  const app = Fastify(fastifyOptions(services)) as unknown as FastifyInstance;
  app.addSchema(CodedError);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) =>
    sendCodedError(
      reply,
      'NOT_FOUND',
      `No route ${request.method} ${request.url.split('?')[0]}; a worker serves /healthz, /readyz and /metrics only.`,
    ),
  );
  registerRequestTracking(app, services);
  closeIdleConnectionsWhileClosing(app);
  healthRoutes(app, services);
  metricsRoutes(app, { metrics: services.metrics, token: services.config.http.metricsToken });
  await app.ready();
  return app;
}

export async function buildApp(services: Services, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { config } = services;
  const app = Fastify({
    ...fastifyOptions(services),
    // Unknown routes take the small limit; each route gets its own in registerBodyLimits.
    bodyLimit: config.http.smallBodyLimitBytes,
    routerOptions: { maxParamLength: 200 },
  }) as unknown as FastifyInstance;
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) =>
    sendCodedError(reply, 'NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}.`),
  );
  // Before any route: a body over its route's limit gets a 413 the client can read (http/body-limits.ts).
  registerBodyLimits(app, config.http);

  // JSON bodies: parsed and walked for depth, NUL characters and prototype keys; large ones on parse threads.
  const jsonParsePool = new JsonParsePool({
    ...config.http.jsonWorkers,
    onSettled: (outcome, seconds) => services.metrics.offloadedJsonParse(outcome, seconds),
  });
  services.metrics.watchJsonParsePool(() => jsonParsePool.stats());
  const unwatchPool = services.metrics.watchPools(() => [jsonParsePool.poolStats()]);
  app.addHook('onClose', () => {
    unwatchPool();
    return jsonParsePool.close();
  });
  registerJsonBodyParser(app, { thresholdBytes: config.http.jsonWorkers.thresholdBytes, pool: jsonParsePool });

  app.addSchema(CodedError);
  app.addSchema(ValidationErrorBody);
  app.addSchema(DetailError);

  registerRequestTracking(app, services);
  closeIdleConnectionsWhileClosing(app);
  registerAuth(app, {
    accounts: services.accounts,
    rateLimiter: services.rateLimiter,
    adminToken: config.http.adminToken,
  });
  app.addHook('preValidation', async (request) => {
    if (request.query && typeof request.query === 'object')
      checkTextParts(request.query as Record<string, unknown>, 'query');
    if (request.params && typeof request.params === 'object')
      checkTextParts(request.params as Record<string, unknown>, 'path');
  });
  app.addHook('onSend', async (request, reply) => {
    if (request.url.startsWith('/v1/') && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });

  await registerOpenApi(app, { version: options.version ?? '0.1.0', publicUrl: config.http.publicUrl });

  templateRoutes(app, services.templates);
  templateVersionRoutes(app, services.templates.versions);
  templateLayerRoutes(app, services.templates);
  agentRoutes(app);
  previewRoutes(app, {
    documents: services.documents,
    rateLimiter: services.rateLimiter,
    perMinute: config.preview.perMinute,
  });
  accountRoutes(app, { accounts: services.accounts, ledger: services.ledger });
  apiKeyRoutes(app, services.accounts);
  pdfRoutes(app, { documents: services.documents });
  imageRoutes(app, { documents: services.documents });
  pdfToolRoutes(app, { pdfTools: services.pdfTools, maxMergeInputs: config.pdfTools.maxMergeInputs });
  pdfSigningRoutes(app, { pdfTools: services.pdfTools });
  pdfAccessibilityRoutes(app, { pdfTools: services.pdfTools });
  finishingToolRoutes(app, { pdfTools: services.pdfTools });
  jobRoutes(app, { jobs: services.jobs });
  // Batches may take their rows as an uploaded file, read as a stream: multipart in their scope only.
  await app.register(async (scope) => {
    await scope.register(multipart);
    batchRoutes(scope, { batches: services.batches });
  });
  einvoiceValidateRoutes(app, { validator: services.einvoiceValidator });
  capabilityRoutes(app, { rules: services.einvoiceRules, serviceTsa: Boolean(config.signing.tsaUrl) });
  fileRoutes(app, services.files);
  assetRoutes(app, { assets: services.assets, maxBytes: config.assets.maxBytes });
  s3Routes(app, services.s3);
  certificateRoutes(app, services.certificates);
  mcpRoutes(app, { accounts: services.accounts, version: options.version ?? '0.1.0' });
  if (config.http.adminToken) adminRoutes(app, { accounts: services.accounts, ledger: services.ledger });
  healthRoutes(app, services);
  metricsRoutes(app, { metrics: services.metrics, token: config.http.metricsToken });
  // The studio has its own scope: swagger-ui registers @fastify/static too.
  const studioDir = defaultStudioDir();
  if (hasStudioBuild(studioDir)) await app.register(studioRoutes, { distDir: studioDir });

  await app.ready();
  return app;
}
