/**
 * `POST /v1/templates/preview`: a free, stamped preview (the studio's live preview). Of unsaved
 * template text (`html`, `css`, `page`, `strict`), or of a saved template (`template_id`): its draft, or the
 * version named by `version`, as `POST /v1/pdf/create` would render it.
 */
import { Type, type Static } from 'typebox';
import { setWarningHeaders } from '../../warning-headers.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { DocumentService, PreviewSource } from '../../../documents/documents.js';
import type { RateLimiter } from '../../../rate-limits/rate-limiter.js';
import { AppError, ValidationError } from '../../../shared/errors.js';
import { INVOICE_DATA, TEMPLATE_EXAMPLE } from '../../examples.js';
import { JsonObject, Nullable, PageSetupSchema, PdfBytes, errorResponses, mediaResponse } from '../../schemas.js';
import { versionRef } from './pdf.js';

const PreviewBody = Type.Object(
  {
    html: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2_000_000,
        description: 'HTML with Jinja2-style variables (need not be saved); required unless template_id is given',
      }),
    ),
    css: Type.Optional(Nullable(Type.String({ maxLength: 1_000_000, description: 'CSS applied to the HTML' }))),
    page: Type.Optional(Nullable(PageSetupSchema)),
    strict: Type.Optional(
      Type.Boolean({
        description:
          'Preview the text as a strict template would render (no template_id): an undefined variable, or a text where a number or date belongs, is a 422 naming it instead of a warning. Default false',
      }),
    ),
    data: Type.Optional(
      Nullable(
        JsonObject({
          description: "Values for the template variables; with template_id, omitted → the template's sample data",
        }),
      ),
    ),
    template_id: Type.Optional(
      Type.String({
        minLength: 12,
        maxLength: 12,
        description:
          'Preview this saved template (12 characters) instead of html/css/page, which must then be left out',
      }),
    ),
    version: Type.Optional(
      versionRef(
        'With template_id: preview this version (a tag, or a version number) instead of the draft; unknown → 404 VERSION_NOT_FOUND',
      ),
    ),
  },
  { examples: [{ html: TEMPLATE_EXAMPLE.html, css: TEMPLATE_EXAMPLE.css, data: INVOICE_DATA }] },
);
type PreviewBody = Static<typeof PreviewBody>;

/** Text or a saved template, never both: a field that cannot be honoured is refused, not ignored. */
function previewSource(body: PreviewBody): PreviewSource {
  if (body.template_id !== undefined) {
    const mixed = (['html', 'css', 'page', 'strict'] as const).filter((name) => body[name] !== undefined);
    if (mixed.length > 0) {
      throw new ValidationError(
        mixed.map((name) => ({
          loc: ['body', name],
          msg: `Leave ${name} out when template_id is given: the saved template (or its version) is previewed`,
          type: 'value_error',
        })),
      );
    }
    return { kind: 'saved', templateId: body.template_id, version: body.version ?? null };
  }
  if (body.version != null)
    throw new ValidationError([
      {
        loc: ['body', 'version'],
        msg: 'version needs template_id: only a saved template has versions',
        type: 'value_error',
      },
    ]);
  if (body.html === undefined)
    throw new ValidationError([
      {
        loc: ['body', 'html'],
        msg: 'Field required (or give template_id to preview a saved template)',
        type: 'missing',
      },
    ]);
  return {
    kind: 'text',
    html: body.html,
    css: body.css ?? null,
    page: body.page ?? null,
    strict: body.strict === true,
  };
}

export function previewRoutes(
  app: FastifyInstance,
  deps: { documents: DocumentService; rateLimiter: RateLimiter; perMinute: number },
): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post('/v1/templates/preview', {
    // Free, with its own budget: the studio's live preview does not spend the account's rate limit.
    config: { auth: 'api_key', studioBudget: true },
    schema: {
      operationId: 'previewTemplate',
      tags: ['Templates'],
      summary: 'Preview template text, a saved template or one of its versions as a PDF (free, stamped PREVIEW)',
      description:
        'Either html (with css, page, strict) of unsaved text, or template_id (with version) of a saved template. What the template needs and did not get (undefined variables, required fields the data lacks, resources that did not load) comes back in X-Pressroom-Warnings and X-Pressroom-Warning-Details; a strict template answers 422 instead. No credit is charged. Previews have their own per-minute budget (PRESSROOM_PREVIEW_PER_MINUTE) on top of the account rate limit (for the studio’s own previews, instead of it), render after documents, and may have only a few waiting per account (then 429 RATE_LIMITED).',
      body: PreviewBody,
      response: {
        200: mediaResponse('The preview PDF, PREVIEW stamped on every page', { 'application/pdf': PdfBytes() }),
        ...errorResponses(401, 403, 404, 413, 422, 429, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const source = previewSource(request.body);
      const budget = await deps.rateLimiter.consumeCustom(`preview:${request.caller.accountId}`, deps.perMinute);
      if (!budget.allowed) {
        throw new AppError(
          'RATE_LIMITED',
          `Preview limit reached (${deps.perMinute} per minute). Retry after ${budget.retryAfterSeconds} s.`,
          {
            details: { retryAfterSeconds: budget.retryAfterSeconds },
          },
        );
      }
      const { pdf, warnings } = await deps.documents.preview(request.caller.accountId, {
        source,
        data: request.body.data ?? null,
      });
      return setWarningHeaders(reply, warnings)
        .header('content-type', 'application/pdf')
        .header('content-disposition', 'inline; filename="preview.pdf"')
        .send(pdf);
    },
  });
}
