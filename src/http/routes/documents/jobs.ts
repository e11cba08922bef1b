/**
 * Asynchronous generation: `POST /v1/pdf/create-async`, `GET /v1/pdf/jobs/{job_id}` (also at the older
 * `GET /v1/pdf/status/{job_id}`, which TemplateFox's SDK docs still poll), `GET /v1/pdf/jobs`.
 */
import { Type, type Static } from 'typebox';
import { AccessibilityChecks, DocumentWarnings, EInvoiceChecks } from './pdf.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { idempotentRequest } from '../../../idempotency/idempotency.js';
import { JOB_STATUSES, type Job, type JobService } from '../../../jobs/jobs.js';
import { ValidationError } from '../../../shared/errors.js';
import { EXAMPLE_TEMPLATE_ID, INVOICE_DATA } from '../../examples.js';
import { Nullable, PageQuery, StringEnum, errorResponses, isoTime } from '../../schemas.js';
import { IdempotencyHeaders, checkDeliveryOptions, generationFields, generationOptions } from './pdf.js';
import { templateFoxShape } from '../../templatefox-clients.js';

const CreateAsyncBody = Type.Object(
  {
    ...generationFields,
    export_type: Type.Optional(
      StringEnum(['url'] as const, { default: 'url', description: 'Async jobs always deliver a URL (or S3)' }),
    ),
    webhook_url: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 2083,
          description:
            'Public https URL that receives pdf.completed / pdf.failed (http and private hosts only with PRESSROOM_ALLOW_PRIVATE_NETWORKS=true)',
        }),
      ),
    ),
    webhook_secret: Type.Optional(
      Nullable(
        Type.String({
          minLength: 16,
          maxLength: 256,
          description:
            'Signs webhook payloads (X-Service-Signature); needs webhook_url. Stored encrypted, never returned',
        }),
      ),
    ),
  },
  {
    examples: [{ template_id: EXAMPLE_TEMPLATE_ID, data: INVOICE_DATA, filename: 'invoice-0001', expiration: 86_400 }],
  },
);
type CreateAsyncBody = Static<typeof CreateAsyncBody>;

const CreateAsyncAnswer = Type.Object({
  job_id: Type.String({ description: 'Job ID: poll GET /v1/pdf/jobs/{job_id}' }),
  status: StringEnum(['pending'] as const, { description: 'Always pending: the job is queued' }),
  credits_remaining: Type.Integer({ description: 'Credits left after this job’s credit was taken' }),
});
type CreateAsyncAnswer = Static<typeof CreateAsyncAnswer>;

const iso8601 = (description: string) => Type.String({ format: 'date-time', description });

const JobSchema = Type.Object(
  {
    id: Type.String({ description: 'Job ID' }),
    status: StringEnum(JOB_STATUSES, { description: 'pending (queued), processing, completed or failed' }),
    template_id: Type.String({ description: 'Template the job renders' }),
    export_type: StringEnum(['url'] as const, { description: 'Always url for jobs' }),
    filename: Nullable(Type.String({ description: 'The filename asked for, if any' })),
    store_s3: Type.Boolean({ description: 'Whether the PDF goes to your S3 bucket' }),
    created_at: iso8601('When the job was accepted'),
    updated_at: iso8601('Last change of the job'),
    completed_at: Nullable(iso8601('When the job completed or failed')),
    result_url: Nullable(Type.String({ description: 'Signed download link (completed, not S3)' })),
    result_filename: Nullable(Type.String({ description: 'Final file name' })),
    result_expires_at: Nullable(iso8601('When result_url expires')),
    result_s3_bucket: Nullable(Type.String({ description: 'Bucket, when stored in S3' })),
    result_s3_key: Nullable(Type.String({ description: 'Key, when stored in S3' })),
    error_message: Nullable(Type.String({ description: 'Why the job failed' })),
    error_code: Nullable(Type.String({ description: 'Coded reason of a failure, e.g. TEMPLATE_RENDER_ERROR' })),
    version: Type.Optional(
      Nullable(
        Type.Object({
          number: Type.Integer({ description: 'Version number' }),
          tag: Nullable(Type.String({ description: 'The tag the version had when the job was accepted' })),
        }),
        {
          description:
            "The template version the job renders; null: the draft as it was when the job ran (left out for TemplateFox's Go SDK: docs/templatefox.md)",
        },
      ),
    ),
    warnings: DocumentWarnings,
    einvoice_checks: EInvoiceChecks,
    accessibility_checks: AccessibilityChecks,
  },
  { $id: 'JobStatusResponse', description: 'An asynchronous PDF job' },
);

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

/** What Pressroom adds to TemplateFox's job answer (templatefox-clients.ts). */
const JOB_ADDITIONS = ['version', 'warnings', 'einvoice_checks', 'accessibility_checks'] as const;

function jobJson(job: Job): Static<typeof JobSchema> {
  return {
    id: job.id,
    status: job.status,
    template_id: job.templateId,
    export_type: 'url',
    filename: job.filename,
    store_s3: job.storeS3,
    created_at: isoTime(job.createdAt),
    updated_at: isoTime(job.updatedAt),
    completed_at: iso(job.completedAt),
    result_url: job.resultUrl,
    result_filename: job.resultFilename,
    result_expires_at: iso(job.resultExpiresAt),
    result_s3_bucket: job.resultS3Bucket,
    result_s3_key: job.resultS3Key,
    error_message: job.errorMessage,
    error_code: job.errorCode,
    version: job.version,
    ...(job.warnings.length > 0 ? { warnings: job.warnings } : {}),
    ...(job.einvoiceChecks ? { einvoice_checks: job.einvoiceChecks } : {}),
    ...(job.accessibilityChecks ? { accessibility_checks: job.accessibilityChecks } : {}),
  };
}

/** Registers the three job routes (API keys only). */
export function jobRoutes(app: FastifyInstance, deps: { jobs: JobService }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addSchema(JobSchema);

  r.post('/v1/pdf/create-async', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'createPdfAsync',
      tags: ['PDF Async'],
      summary: 'Queue a PDF job',
      description:
        'Takes 1 credit at once, refunded if the job fails permanently, and answers at once with the job id. Poll GET /v1/pdf/jobs/{job_id} or pass ' +
        'webhook_url (pdf.completed / pdf.failed). Same fields as POST /v1/pdf/create, export_type url only; the same rules for fields that cannot apply.',
      body: CreateAsyncBody,
      headers: IdempotencyHeaders,
      response: { 200: CreateAsyncAnswer, ...errorResponses(400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 503) },
    },
    handler: async (request) => {
      const body = request.body as CreateAsyncBody;
      checkDeliveryOptions(body);
      const options = generationOptions({ ...body, export_type: 'url' });
      // Without webhook_url a webhook_secret signs nothing; TemplateFox ignores it (its n8n node sends it), so do we, with a warning.
      const secretIgnored = body.webhook_secret != null && body.webhook_url == null;
      if (secretIgnored) options.ignoredFields = [...(options.ignoredFields ?? []), 'webhook_secret'];
      const accepted = await deps.jobs.accept(request.caller.accountId, {
        templateId: body.template_id,
        data: body.data,
        options,
        filename: body.filename ?? null,
        webhookUrl: body.webhook_url ?? null,
        webhookSecret: secretIgnored ? null : (body.webhook_secret ?? null),
        idempotency: idempotentRequest(
          request.headers['idempotency-key'] as string | undefined,
          'pdf.create-async',
          body,
        ),
      });
      const answer: CreateAsyncAnswer = {
        job_id: accepted.jobId,
        status: 'pending',
        credits_remaining: accepted.creditsRemaining,
      };
      return answer;
    },
  });

  const jobPaths = [
    {
      path: '/v1/pdf/jobs/:job_id',
      operationId: 'getPdfJob',
      summary: 'Get job status',
      description: 'One job of the caller: its state, and its result or error once finished.',
    },
    {
      path: '/v1/pdf/status/:job_id',
      operationId: 'getPdfJobStatus',
      summary: 'Get job status (older path)',
      description:
        'The same answer as GET /v1/pdf/jobs/{job_id}, at the path older TemplateFox SDK documentation polls.',
    },
  ] as const;
  for (const { path, operationId, summary, description } of jobPaths) {
    r.get(path, {
      config: { auth: 'api_key' },
      schema: {
        operationId,
        tags: ['PDF Async'],
        summary,
        description,
        params: Type.Object({ job_id: Type.String({ description: 'Job ID, as create-async answered it' }) }),
        response: { 200: Type.Unsafe({ $ref: 'JobStatusResponse#' }), ...errorResponses(401, 404, 422, 429) },
      },
      handler: async (request) =>
        templateFoxShape(
          request,
          jobJson(await deps.jobs.get(request.caller.accountId, request.params.job_id)),
          JOB_ADDITIONS,
        ),
    });
  }

  r.get('/v1/pdf/jobs', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'listPdfJobs',
      tags: ['PDF Async'],
      summary: 'List jobs',
      description: "The caller's jobs, newest first, optionally of one status.",
      querystring: Type.Object({
        ...PageQuery({ default: 20, max: 100 }),
        status: Type.Optional(StringEnum(JOB_STATUSES, { description: 'Only jobs in this state' })),
      }),
      response: {
        200: Type.Object({
          jobs: Type.Array(Type.Unsafe({ $ref: 'JobStatusResponse#' }), { description: 'This page of jobs' }),
          total: Type.Integer({ description: 'Jobs matching the filter, all pages' }),
          limit: Type.Integer({ description: 'Page size applied' }),
          offset: Type.Integer({ description: 'Records skipped' }),
        }),
        ...errorResponses(401, 422, 429),
      },
    },
    handler: async (request) => {
      const limit = request.query.limit ?? 20;
      const offset = request.query.offset ?? 0;
      const { jobs, total } = await deps.jobs.list(request.caller.accountId, {
        status: request.query.status,
        limit,
        offset,
      });
      return { jobs: jobs.map((job) => templateFoxShape(request, jobJson(job), JOB_ADDITIONS)), total, limit, offset };
    },
  });
}
