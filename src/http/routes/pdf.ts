/** `POST /v1/pdf/create`: synchronous generation, exactly as the spec describes it. */
import { Type, type Static } from 'typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { DocumentService, GenerationOptions, GenerationResult } from '../../documents/documents.js';
import { requestFingerprint, validateIdempotencyKey } from '../../idempotency/idempotency.js';
import { attachmentDisposition } from '../../storage/content-disposition.js';
import { JsonObject, Nullable, StringEnum, TEMPLATE_ID, errorResponses } from '../schemas.js';

/** A template version named by its tag or its number (create, create-async and preview take one). */
export function versionRef(description: string) {
  // Not Nullable(): that helper takes one `type`, and this is a string or an integer.
  return Type.Union([Type.String({ minLength: 1, maxLength: 50 }), Type.Integer({ minimum: 1 }), Type.Null()], { description });
}

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
  version: Type.Optional(versionRef('Render this template version (a tag, or a version number) instead of the current draft; unknown → 404 VERSION_NOT_FOUND, nothing charged')),
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
    version: body.version ?? null,
  };
}

type UrlAnswer = { url: string; filename: string; credits_remaining: number; expires_in: number };
type S3Answer = { s3_bucket: string; s3_key: string; filename: string; credits_remaining: number };

/** The JSON answer for url and S3 deliveries; on a replay `expires_in` counts down from the first answer. */
function jsonAnswer(result: GenerationResult, expirationSeconds: number): UrlAnswer | S3Answer | null {
  const d = result.delivery;
  if (d.kind === 'url') {
    const expiresIn = result.replayed ? Math.max(0, Math.ceil((d.expiresAt - Date.now()) / 1000)) : expirationSeconds;
    return { url: d.url, filename: d.filename, credits_remaining: result.creditsRemaining, expires_in: expiresIn };
  }
  if (d.kind === 's3') return { s3_bucket: d.bucket, s3_key: d.key, filename: d.filename, credits_remaining: result.creditsRemaining };
  return null;
}

/**
 * The charge of a request without an Idempotency-Key stands once its answer has been handed to the
 * connection; a client that went away first (during the render, or mid-answer) is not charged.
 */
function settleWhenAnswered(reply: FastifyReply, result: GenerationResult): void {
  const response = reply.raw;
  if (response.destroyed) return void result.settle(false);
  response.once('close', () => void result.settle(response.writableFinished));
}

function sendPdf(reply: FastifyReply, pdf: Buffer, filename: string, creditsRemaining: number): FastifyReply {
  return reply
    .code(200)
    .header('content-type', 'application/pdf')
    .header('content-disposition', attachmentDisposition(filename))
    .header('x-credits-remaining', String(creditsRemaining))
    .send(pdf);
}

export function pdfRoutes(app: FastifyInstance, deps: { documents: DocumentService }): void {
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
      const key = validateIdempotencyKey(request.headers['idempotency-key'] as string | undefined);
      const options = generationOptions(body);
      const result = await deps.documents.generate({
        accountId: request.caller.accountId,
        templateId: body.template_id,
        data: body.data,
        options,
        idempotency: key ? { key, fingerprint: requestFingerprint('pdf.create', body) } : undefined,
      });
      settleWhenAnswered(reply, result);
      const json = jsonAnswer(result, options.expirationSeconds);
      if (json) return reply.send(json);
      const d = result.delivery as Extract<GenerationResult['delivery'], { kind: 'binary' }>;
      return sendPdf(reply, d.pdf, d.filename, result.creditsRemaining);
    },
  });
}
