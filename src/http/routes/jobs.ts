/**
 * Asynchronous generation: `POST /v1/pdf/create-async`, `GET /v1/pdf/jobs/{job_id}` (also at the older
 * `GET /v1/pdf/status/{job_id}`, which TemplateFox's SDK docs still poll), `GET /v1/pdf/jobs`.
 */
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { IdempotencyService } from '../../idempotency/idempotency.js';
import { requestFingerprint, validateIdempotencyKey } from '../../idempotency/idempotency.js';
import { JOB_STATUSES, type Job, type JobService } from '../../jobs/jobs.js';
import { Nullable, PageQuery, StringEnum, errorResponses, isoTime } from '../schemas.js';
import { IdempotencyHeaders, generationFields, generationOptions } from './pdf.js';

const CreateAsyncBody = Type.Object({
  ...generationFields,
  export_type: Type.Optional(StringEnum(['url'] as const, { default: 'url', description: 'Async jobs always deliver a URL (or S3)' })),
  webhook_url: Type.Optional(Nullable(Type.String({
    minLength: 1,
    maxLength: 2083,
    description: 'Public https URL that receives pdf.completed / pdf.failed (http and private hosts only with PRESSROOM_ALLOW_PRIVATE_NETWORKS=true)',
  }))),
  webhook_secret: Type.Optional(Nullable(Type.String({ minLength: 16, maxLength: 256, description: 'Signs webhook payloads; stored encrypted, never returned' }))),
});
type CreateAsyncBody = Static<typeof CreateAsyncBody>;

const CreateAsyncAnswer = Type.Object({ job_id: Type.String(), status: StringEnum(['pending'] as const), credits_remaining: Type.Integer() });
type CreateAsyncAnswer = Static<typeof CreateAsyncAnswer>;

const JobSchema = Type.Object({
  id: Type.String(),
  status: StringEnum(JOB_STATUSES),
  template_id: Type.String(),
  export_type: StringEnum(['url'] as const),
  filename: Nullable(Type.String()),
  store_s3: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  completed_at: Nullable(Type.String({ format: 'date-time' })),
  result_url: Nullable(Type.String()),
  result_filename: Nullable(Type.String()),
  result_expires_at: Nullable(Type.String({ format: 'date-time' })),
  result_s3_bucket: Nullable(Type.String()),
  result_s3_key: Nullable(Type.String()),
  error_message: Nullable(Type.String()),
  error_code: Nullable(Type.String()),
  version: Nullable(Type.Object({
    number: Type.Integer(),
    tag: Nullable(Type.String({ description: 'The tag the version had when the job was accepted' })),
  }), { description: 'The template version the job renders; null: the draft as it was when the job ran' }),
}, { $id: 'JobStatusResponse' });

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

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
  };
}

/** Registers the three job routes (API keys only). */
export function jobRoutes(app: FastifyInstance, deps: { jobs: JobService; idempotency: IdempotencyService }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addSchema(JobSchema);

  r.post('/v1/pdf/create-async', {
    config: { auth: 'api_key' },
    schema: {
      tags: ['pdf'],
      summary: 'Queue a PDF job',
      description: 'Takes 1 credit at once, refunded if the job fails permanently. Poll GET /v1/pdf/jobs/{job_id} or pass webhook_url.',
      body: CreateAsyncBody,
      headers: IdempotencyHeaders,
      response: { 200: CreateAsyncAnswer, ...errorResponses(400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 503) },
    },
    handler: async (request) => {
      const body = request.body as CreateAsyncBody;
      const accountId = request.caller.accountId;
      const run = async (): Promise<CreateAsyncAnswer> => {
        const accepted = await deps.jobs.accept(accountId, {
          templateId: body.template_id,
          data: body.data,
          options: generationOptions({ ...body, export_type: 'url' }),
          filename: body.filename ?? null,
          webhookUrl: body.webhook_url ?? null,
          webhookSecret: body.webhook_secret ?? null,
        });
        return { job_id: accepted.jobId, status: 'pending', credits_remaining: accepted.creditsRemaining };
      };
      const key = validateIdempotencyKey(request.headers['idempotency-key'] as string | undefined);
      if (!key) return run();
      return deps.idempotency.run(accountId, { key, fingerprint: requestFingerprint('pdf.create-async', body) }, run);
    },
  });

  for (const [path, summary] of [['/v1/pdf/jobs/:job_id', 'One job'], ['/v1/pdf/status/:job_id', 'One job (older path, same answer as GET /v1/pdf/jobs/{job_id})']] as const) {
    r.get(path, {
      config: { auth: 'api_key' },
      schema: {
        tags: ['pdf'],
        summary,
        params: Type.Object({ job_id: Type.String({ description: 'Job ID' }) }),
        response: { 200: Type.Unsafe({ $ref: 'JobStatusResponse#' }), ...errorResponses(401, 404, 422, 429) },
      },
      handler: async (request) => jobJson(await deps.jobs.get(request.caller.accountId, request.params.job_id)),
    });
  }

  r.get('/v1/pdf/jobs', {
    config: { auth: 'api_key' },
    schema: {
      tags: ['pdf'],
      summary: "The caller's jobs, newest first",
      querystring: Type.Object({
        ...PageQuery({ default: 20, max: 100 }),
        status: Type.Optional(StringEnum(JOB_STATUSES)),
      }),
      response: {
        200: Type.Object({ jobs: Type.Array(Type.Unsafe({ $ref: 'JobStatusResponse#' })), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() }),
        ...errorResponses(401, 422, 429),
      },
    },
    handler: async (request) => {
      const limit = request.query.limit ?? 20;
      const offset = request.query.offset ?? 0;
      const { jobs, total } = await deps.jobs.list(request.caller.accountId, { status: request.query.status, limit, offset });
      return { jobs: jobs.map(jobJson), total, limit, offset };
    },
  });
}
