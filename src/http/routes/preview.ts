/** `POST /v1/templates/preview`: a free, stamped preview of unsaved template text (the studio's live preview). */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { DocumentService } from '../../documents/documents.js';
import type { RateLimiter } from '../../rate-limits/rate-limiter.js';
import { AppError } from '../../shared/errors.js';
import { INVOICE_DATA, TEMPLATE_EXAMPLE } from '../examples.js';
import { JsonObject, Nullable, PageSetupSchema, PdfBytes, errorResponses, mediaResponse } from '../schemas.js';

export function previewRoutes(app: FastifyInstance, deps: { documents: DocumentService; rateLimiter: RateLimiter; perMinute: number }): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post('/v1/templates/preview', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'previewTemplate',
      tags: ['Templates'],
      summary: 'Preview template text as a PDF (free, stamped PREVIEW)',
      description: 'No credit is charged. Previews have their own per-minute budget (PRESSROOM_PREVIEW_PER_MINUTE) on top of the account rate limit, render after documents, and may have only PRESSROOM_RENDER_PREVIEW_QUEUE_LIMIT waiting per account (then 429 RATE_LIMITED).',
      body: Type.Object({
        html: Type.String({ minLength: 1, maxLength: 2_000_000, description: 'HTML with Jinja2-style variables (need not be saved)' }),
        css: Type.Optional(Nullable(Type.String({ maxLength: 1_000_000, description: 'CSS applied to the HTML' }))),
        page: Type.Optional(Nullable(PageSetupSchema)),
        data: Type.Optional(Nullable(JsonObject({ description: 'Values for the template variables' }))),
      }, { examples: [{ html: TEMPLATE_EXAMPLE.html, css: TEMPLATE_EXAMPLE.css, data: INVOICE_DATA }] }),
      response: { 200: mediaResponse('The preview PDF, PREVIEW stamped on every page', { 'application/pdf': PdfBytes() }), ...errorResponses(401, 413, 422, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      const budget = await deps.rateLimiter.consumeCustom(`preview:${request.caller.accountId}`, deps.perMinute);
      if (!budget.allowed) {
        throw new AppError('RATE_LIMITED', `Preview limit reached (${deps.perMinute} per minute). Retry after ${budget.retryAfterSeconds} s.`, {
          details: { retryAfterSeconds: budget.retryAfterSeconds },
        });
      }
      const pdf = await deps.documents.preview(request.caller.accountId, request.body);
      return reply.header('content-type', 'application/pdf').header('content-disposition', 'inline; filename="preview.pdf"').send(pdf);
    },
  });
}
