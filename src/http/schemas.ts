/**
 * Schemas shared by several routes. One source gives validation, TypeScript types and the OpenAPI document.
 */
import { Type, type TSchema, type Static } from 'typebox';
import { PAGE_LENGTH_PATTERN, PAGE_LENGTH_UNITS_TEXT } from '../rendering/page-length.js';
import { PAPER_FORMAT_NAMES } from '../rendering/page-size.js';

/** `T | null` as JSON Schema `type: [T, "null"]`, so errors speak of the real type, not of anyOf branches. */
export function Nullable<T extends TSchema>(schema: T, options: Record<string, unknown> = {}) {
  const inner = schema as unknown as { type?: string };
  return Type.Unsafe<Static<T> | null>({ ...schema, ...options, type: [inner.type ?? 'string', 'null'] });
}

/** A string enum as `{type: "string", enum: [...]}`. */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const CodedError = Type.Object(
  {
    error: Type.String({ description: 'Stable error code, e.g. TEMPLATE_NOT_FOUND' }),
    message: Type.String({ description: 'What failed and how to fix it' }),
    part: Type.Optional(
      StringEnum(['html', 'css', 'header', 'footer'] as const, {
        description:
          'For template errors: the template part (html, css, page.header_html, page.footer_html) the line and column refer to; for DOCUMENT_TOO_LARGE with bound header_footer: the part past it',
      }),
    ),
    line: Type.Optional(Type.Integer({ description: 'Template line, for template errors' })),
    column: Type.Optional(Type.Integer({ description: 'Column on that line, where the template engine knows it' })),
    bound: Type.Optional(
      StringEnum(['bytes', 'pages', 'image_pixels', 'memory', 'layers', 'header_footer', 'page_size'] as const, {
        description:
          'For DOCUMENT_TOO_LARGE: the bound the document went past (`layers`: an image template with more layers than modifications work on; `page_size`: a CSS @page size longer than 900in a side)',
      }),
    ),
  },
  { $id: 'CodedError', description: 'Coded error' },
);

export const ValidationErrorBody = Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), {
          description:
            'Where the problem is: the part (body, query, path, header), then the field path, e.g. ["body","template_id"]',
        }),
        msg: Type.String({ description: 'What is wrong, e.g. "String should have at least 12 characters"' }),
        type: Type.String({ description: 'Stable error type, e.g. missing, string_too_short, extra_forbidden' }),
        ctx: Type.Optional(
          Type.Object(
            {},
            { additionalProperties: true, description: 'Facts about the failure, e.g. {"min_length": 12}' },
          ),
        ),
      }),
      { description: 'One item per problem' },
    ),
  },
  { $id: 'HTTPValidationError', description: 'Validation error' },
);

export const DetailError = Type.Object(
  { detail: Type.String({ description: 'What failed, e.g. the bucket was not found or access was denied' }) },
  { $id: 'DetailError', description: 'Detail error' },
);

export const ref = (id: 'CodedError' | 'HTTPValidationError' | 'DetailError', description?: string) =>
  Type.Unsafe(description ? { $ref: `${id}#`, description } : { $ref: `${id}#` });

/** What each error status means, as the OpenAPI document says it (docs/errors.md has the codes). */
const ERROR_STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'INVALID_REQUEST: the request cannot be carried out as given, e.g. store_s3 without an S3 configuration',
  401: 'UNAUTHORIZED: missing, invalid or revoked credentials',
  402: 'INSUFFICIENT_CREDITS: no credits left; nothing was charged',
  403: "FORBIDDEN: another account's resource, or an expired or altered download link",
  404: 'Not found: TEMPLATE_NOT_FOUND, VERSION_NOT_FOUND, JOB_NOT_FOUND, BATCH_NOT_FOUND or NOT_FOUND',
  409: 'Conflict: IDEMPOTENCY_KEY_IN_USE (retry shortly), VERSION_TAG_EXISTS, or ASSET_IN_USE (a published version prints the asset; the message names the versions)',
  413: 'PAYLOAD_TOO_LARGE: the body is over this route’s limit (the message names it)',
  422: 'Validation error ({detail: [{loc, msg, type}]}), or a coded template error (TEMPLATE_SYNTAX_ERROR, TEMPLATE_RENDER_ERROR…), DOCUMENT_TOO_LARGE, DOCUMENT_TOO_LONG_FOR_SYNC (send it to /v1/pdf/create-async), PDF_TOO_COMPLEX (PDF tools: qpdf went past its memory or CPU ceiling), or XML_TOO_COMPLEX (an e-invoice XML check went past its time or memory ceiling)',
  429: 'RATE_LIMITED: retry after the Retry-After header',
  500: 'INTERNAL_ERROR or RENDER_FAILED (refunded); the message carries the request id',
  501: 'NOT_IMPLEMENTED: this service does not offer the operation',
  502: 'STORAGE_ERROR or S3_UPLOAD_FAILED: the document could not be stored (refunded)',
  503: 'SERVICE_UNAVAILABLE or RENDERER_BUSY: retry',
  504: 'RENDER_TIMEOUT: the render ran past its deadline (refunded)',
};

/** Error responses every authenticated route can give. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) {
    const description = ERROR_STATUS_DESCRIPTIONS[status] ?? 'Coded error';
    // 422 is the validation shape, or a coded template error (TEMPLATE_RENDER_ERROR…) on generation routes.
    out[status] =
      status === 422
        ? Type.Union([ref('HTTPValidationError'), ref('CodedError')], { description })
        : ref('CodedError', description);
  }
  return out;
}

/** A PDF in the response body. */
export const PdfBytes = () =>
  Type.Unsafe<Buffer>({
    type: 'string',
    format: 'binary',
    contentMediaType: 'application/pdf',
    description: 'The PDF file',
  });

/** The image media types POST /v1/image/create answers, each declared as bytes. */
export const imageBytesByType = (): Record<string, TSchema> =>
  Object.fromEntries(
    (['image/png', 'image/jpeg', 'image/webp'] as const).map((type) => [
      type,
      Type.Unsafe<Buffer>({
        type: 'string',
        format: 'binary',
        contentMediaType: type,
        description: `The image (${type})`,
      }),
    ]),
  );

/**
 * A 200 answer declared per media type, so a generated client reads PDF bytes as bytes, not as JSON:
 * `content` maps each media type to its schema (Fastify serialises by the reply's content type;
 * Buffers are sent as they are).
 */
export function mediaResponse(description: string, content: Record<string, TSchema>) {
  const media = Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema }]));
  return Type.Unsafe<unknown>({ description, content: media });
}

/** Any JSON object (data, sample data). */
export const JsonObject = (options: Record<string, unknown> = {}) =>
  Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });

export const SuccessBody = Type.Object({
  success: Type.Boolean({ description: 'Always true: the operation was carried out' }),
});

export const TEMPLATE_ID = Type.String({
  minLength: 12,
  maxLength: 12,
  description: 'Template short ID, exactly 12 characters',
});

export const FieldSpecSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Key of this property in each array item' }),
  label: Type.String({ maxLength: 200, description: 'Human-readable label' }),
  type: Type.Optional(Type.String({ default: 'text', maxLength: 20, description: 'text, number, boolean or array' })),
});

export const FieldSchema = Type.Object({
  key: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'Key to use in the `data` object (dotted for nested objects, e.g. customer.name)',
  }),
  label: Type.String({ maxLength: 200, description: 'Human-readable label for forms' }),
  type: Type.Optional(
    StringEnum(['string', 'integer', 'number', 'boolean', 'array'] as const, {
      default: 'string',
      description: 'Value type',
    }),
  ),
  required: Type.Optional(Type.Boolean({ default: false, description: 'Whether the template needs this field' })),
  helpText: Type.Optional(
    Nullable(Type.String({ maxLength: 1000, description: 'Help text, usually with an example value' })),
  ),
  spec: Type.Optional(
    Nullable(
      Type.Array(FieldSpecSchema, { maxItems: 200, description: 'Array fields only: the structure of each item' }),
    ),
  ),
  options: Type.Optional(
    Type.Array(Type.String({ maxLength: 1000 }), {
      maxItems: 10_000,
      description:
        "A fillable PDF form's radio group, dropdown or list box (docs/pdf-forms.md): the values it takes. Read from the form; ignored when sent",
    }),
  ),
});

/** A page margin: the renderer's own rule (rendering/page-length.ts), so what saves also prints. */
const PageLength = (description = `0 or a number with ${PAGE_LENGTH_UNITS_TEXT}, e.g. 20mm`) =>
  Type.String({ pattern: PAGE_LENGTH_PATTERN, maxLength: 20, description });

export const PageSetupSchema = Type.Object(
  {
    format: Type.Optional(
      StringEnum(PAPER_FORMAT_NAMES, { description: 'Paper size (default A4); or give width and height instead' }),
    ),
    width: Type.Optional(PageLength('Custom paper width, with height and instead of format, e.g. 100mm')),
    height: Type.Optional(PageLength('Custom paper height, with width and instead of format, e.g. 150mm')),
    orientation: Type.Optional(
      StringEnum(['portrait', 'landscape'] as const, { description: 'Page orientation (default portrait)' }),
    ),
    margin: Type.Optional(
      Type.Object(
        {
          top: Type.Optional(PageLength()),
          right: Type.Optional(PageLength()),
          bottom: Type.Optional(PageLength()),
          left: Type.Optional(PageLength()),
        },
        { description: 'Page margins' },
      ),
    ),
    header_html: Type.Optional(
      Type.String({
        maxLength: 100_000,
        description:
          'Template HTML repeated at the top of every page; elements with class pageNumber / totalPages show the page numbers',
      }),
    ),
    footer_html: Type.Optional(
      Type.String({
        maxLength: 100_000,
        description: 'Template HTML repeated at the bottom of every page (pageNumber / totalPages work here too)',
      }),
    ),
    tagged: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'Tagged (accessible) PDF: a structure tree and an outline (bookmarks) from the headings, which screen readers and PDF/UA need. ' +
          "false prints without them: faster and much smaller for long documents, but not accessible. A create request's `tagged` overrides it",
      }),
    ),
    pdf_ua: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "Make this template's documents PDF/UA-1 (accessible, checked before the charge; docs/accessibility.md). " +
          "Needs <html lang>, a <title> and alt on every image. A create request's `pdf_ua` overrides it",
      }),
    ),
  },
  { description: 'Paper, margins, header and footer' },
);

export const isoTime = (ms: number): string => new Date(ms).toISOString();

/**
 * The deepest `offset` a listing accepts. Without a bound, `offset=1e21` passed validation and failed in
 * the database (past PostgreSQL's bigint) with a 500; this one is far past any account's rows.
 */
export const MAX_OFFSET = 1_000_000_000;

/** `limit` and `offset` query parameters of a newest-first listing. */
export function PageQuery(limit: { default: number; max: number }) {
  return {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: limit.max,
        default: limit.default,
        description: `Page size (1–${limit.max})`,
      }),
    ),
    offset: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Records to skip' }),
    ),
  };
}
