/** `POST /v1/pdf/create`: synchronous generation, exactly as the spec describes it. */
import { Type, type Static } from 'typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { DocumentService, GenerationOptions, GenerationResult } from '../../documents/documents.js';
import type { FileService } from '../../files/files.js';
import type { IdempotencyService } from '../../idempotency/idempotency.js';
import { requestFingerprint, validateIdempotencyKey } from '../../idempotency/idempotency.js';
import { AppError } from '../../shared/errors.js';
import { attachmentDisposition } from '../../storage/content-disposition.js';
import { JsonObject, Nullable, StringEnum, TEMPLATE_ID, errorResponses } from '../schemas.js';

/** Fields shared by both create endpoints (the async one adds webhooks and allows only `url`). */
export const generationFields = {
  template_id: TEMPLATE_ID,
  data: JsonObject({ description: 'Values for the template variables' }),
  expiration: Type.Optional(Type.Integer({ minimum: 60, maximum: 604_800, default: 86_400, description: 'Seconds until the URL expires (url only)' })),
  filename: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$', description: 'Without the .pdf extension' }))),
  store_s3: Type.Optional(Type.Boolean({ default: false })),
  s3_filepath: Type.Optional(Nullable(Type.String({ maxLength: 500, pattern: '^[A-Za-z0-9_./-]*$' }))),
  s3_bucket: Type.Optional(Nullable(Type.String({ minLength: 3, maxLength: 63, pattern: '^[a-z0-9][a-z0-9.-]*[a-z0-9]$' }))),
  pdf_variant: Type.Optional(Nullable(StringEnum(['pdf/a-1b', 'pdf/a-2b', 'pdf/a-3b'] as const))),
};

const CreateBody = Type.Object({
  ...generationFields,
  export_type: Type.Optional(StringEnum(['url', 'binary'] as const, { default: 'url' })),
});
type CreateBody = Static<typeof CreateBody>;

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Repeat within 24 h → the first answer, charged once' })),
});

export function generationOptions(body: Omit<CreateBody, 'export_type'> & { export_type?: 'url' | 'binary' }): GenerationOptions {
  return {
    exportType: body.export_type ?? 'url',
    expirationSeconds: body.expiration ?? 86_400,
    filename: body.filename ?? 'document',
    storeS3: body.store_s3 ?? false,
    s3Filepath: body.s3_filepath ?? null,
    s3Bucket: body.s3_bucket ?? null,
    pdfVariant: body.pdf_variant ?? null,
  };
}

/** What an idempotent replay needs: the JSON answer, or a stored file for binary answers. */
type UrlAnswer = { url: string; filename: string; credits_remaining: number; expires_in: number };
type S3Answer = { s3_bucket: string; s3_key: string; filename: string; credits_remaining: number };
type StoredAnswer = { json: UrlAnswer | S3Answer; expiresAt?: number } | { fileId: string; filename: string; creditsRemaining: number };

function jsonAnswer(result: GenerationResult, expiresInSeconds: number): UrlAnswer | S3Answer | null {
  const d = result.delivery;
  if (d.kind === 'url') return { url: d.url, filename: d.filename, credits_remaining: result.creditsRemaining, expires_in: expiresInSeconds };
  if (d.kind === 's3') return { s3_bucket: d.bucket, s3_key: d.key, filename: d.filename, credits_remaining: result.creditsRemaining };
  return null;
}

function sendPdf(reply: FastifyReply, pdf: Buffer, filename: string, creditsRemaining: number): FastifyReply {
  return reply
    .code(200)
    .header('content-type', 'application/pdf')
    .header('content-disposition', attachmentDisposition(filename))
    .header('x-credits-remaining', String(creditsRemaining))
    .send(pdf);
}

export function pdfRoutes(app: FastifyInstance, deps: { documents: DocumentService; idempotency: IdempotencyService; files: FileService }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post('/v1/pdf/create', {
    config: { auth: 'api_key' },
    schema: {
      tags: ['pdf'],
      summary: 'Generate a PDF synchronously',
      description: 'Consumes 1 credit per successful generation; a failed one is refunded.',
      body: CreateBody,
      headers: IdempotencyHeaders,
      response: {
        200: Type.Union([
          Type.Object({ url: Type.String(), filename: Type.String(), credits_remaining: Type.Integer(), expires_in: Type.Integer() }),
          Type.Object({ s3_bucket: Type.String(), s3_key: Type.String(), filename: Type.String(), credits_remaining: Type.Integer() }),
        ], { description: 'JSON for export_type url or store_s3; raw application/pdf bytes for export_type binary' }),
        ...errorResponses(400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const body = request.body as CreateBody;
      const accountId = request.caller.accountId;
      const options = generationOptions(body);
      const key = validateIdempotencyKey(request.headers['idempotency-key'] as string | undefined);
      const run = () => deps.documents.generate(accountId, body.template_id, body.data, options);

      if (!key) {
        const result = await run();
        const json = jsonAnswer(result, options.expirationSeconds);
        if (json) return reply.send(json);
        const d = result.delivery as Extract<GenerationResult['delivery'], { kind: 'binary' }>;
        return sendPdf(reply, d.pdf, d.filename, result.creditsRemaining);
      }

      // Binary answers are kept as a file for 24 h so a replay can send the same bytes.
      const answer = await deps.idempotency.run<StoredAnswer>(accountId, key, requestFingerprint('pdf.create', body), async () => {
        const result = await run();
        const json = jsonAnswer(result, options.expirationSeconds);
        if (json) return { json, expiresAt: result.delivery.kind === 'url' ? result.delivery.expiresAt : undefined };
        const d = result.delivery as Extract<GenerationResult['delivery'], { kind: 'binary' }>;
        const stored = await deps.files.store(accountId, d.pdf, d.filename, 86_400);
        return { fileId: stored.fileId, filename: d.filename, creditsRemaining: result.creditsRemaining };
      });
      if ('json' in answer) {
        // Same URL; `expires_in` counts down from the first answer.
        if (answer.expiresAt !== undefined && 'expires_in' in answer.json) answer.json.expires_in = Math.max(0, Math.ceil((answer.expiresAt - Date.now()) / 1000));
        return reply.send(answer.json);
      }
      const pdf = await deps.files.read(answer.fileId);
      if (!pdf) throw new AppError('FILE_NOT_FOUND', 'The stored result of this idempotent request is gone; retry with a new Idempotency-Key.');
      return sendPdf(reply, pdf, answer.filename, answer.creditsRemaining);
    },
  });
}
