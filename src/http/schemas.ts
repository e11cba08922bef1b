/**
 * Schemas shared by several routes. One source gives validation, TypeScript types and the OpenAPI document.
 */
import { Type, type TSchema, type Static } from 'typebox';
import { PAGE_LENGTH_PATTERN, PAGE_LENGTH_UNITS_TEXT } from '../rendering/page-length.js';

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
    line: Type.Optional(Type.Integer({ description: 'Template line, for template errors' })),
    column: Type.Optional(Type.Integer()),
    bound: Type.Optional(
      StringEnum(['bytes', 'pages', 'image_pixels', 'memory'] as const, { description: 'For DOCUMENT_TOO_LARGE: the bound the document went past' }),
    ),
  },
  { $id: 'CodedError', description: 'Coded error' },
);

export const ValidationErrorBody = Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
        msg: Type.String(),
        type: Type.String(),
        ctx: Type.Optional(Type.Object({}, { additionalProperties: true })),
      }),
    ),
  },
  { $id: 'HTTPValidationError', description: 'Validation error' },
);

export const DetailError = Type.Object({ detail: Type.String() }, { $id: 'DetailError', description: 'Detail error' });

export const ref = (id: 'CodedError' | 'HTTPValidationError' | 'DetailError') => Type.Unsafe({ $ref: `${id}#` });

/** Error responses every authenticated route can give. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  // 422 is the validation shape, or a coded template error (TEMPLATE_RENDER_ERROR…) on generation routes.
  for (const status of statuses) out[status] = status === 422 ? Type.Union([ref('HTTPValidationError'), ref('CodedError')]) : ref('CodedError');
  return out;
}

/** Any JSON object (data, sample data). */
export const JsonObject = (options: Record<string, unknown> = {}) =>
  Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });

export const SuccessBody = Type.Object({ success: Type.Boolean() });

export const TEMPLATE_ID = Type.String({ minLength: 12, maxLength: 12, description: 'Template short ID, exactly 12 characters' });

export const FieldSpecSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  label: Type.String({ maxLength: 200 }),
  type: Type.Optional(Type.String({ default: 'text', maxLength: 20, description: 'text, number, boolean or array' })),
});

export const FieldSchema = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 200 }),
  label: Type.String({ maxLength: 200 }),
  type: Type.Optional(StringEnum(['string', 'integer', 'number', 'boolean', 'array'] as const, { default: 'string' })),
  required: Type.Optional(Type.Boolean({ default: false })),
  helpText: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  spec: Type.Optional(Nullable(Type.Array(FieldSpecSchema, { maxItems: 200 }))),
});

/** A page margin: the renderer's own rule (rendering/page-length.ts), so what saves also prints. */
const PageLength = () =>
  Type.String({ pattern: PAGE_LENGTH_PATTERN, maxLength: 20, description: `0 or a number with ${PAGE_LENGTH_UNITS_TEXT}, e.g. 20mm` });

export const PageSetupSchema = Type.Object({
  format: Type.Optional(StringEnum(['A4', 'Letter', 'Legal', 'A3', 'A5'] as const)),
  orientation: Type.Optional(StringEnum(['portrait', 'landscape'] as const)),
  margin: Type.Optional(
    Type.Object({
      top: Type.Optional(PageLength()),
      right: Type.Optional(PageLength()),
      bottom: Type.Optional(PageLength()),
      left: Type.Optional(PageLength()),
    }),
  ),
  header_html: Type.Optional(Type.String({ maxLength: 100_000 })),
  footer_html: Type.Optional(Type.String({ maxLength: 100_000 })),
});

export const isoTime = (ms: number): string => new Date(ms).toISOString();

/**
 * The deepest `offset` a listing accepts. Without a bound, `offset=1e21` passed validation and failed in
 * the database (past PostgreSQL's bigint) with a 500; this one is far past any account's rows.
 */
export const MAX_OFFSET = 1_000_000_000;

/** `limit` and `offset` query parameters of a newest-first listing. */
export function PageQuery(limit: { default: number; max: number }) {
  return {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: limit.max, default: limit.default })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0 })),
  };
}
