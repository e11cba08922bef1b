/**
 * Batches (issue 40, docs/batches.md): `POST /v1/pdf/batches` (JSON, or multipart with the rows as a
 * CSV or NDJSON file), `GET /v1/pdf/batches`, `GET /v1/pdf/batches/{id}`, `GET …/{id}/items`,
 * `POST …/{id}/cancel`. API keys only, like the job routes.
 */
import { Type, type Static } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { MultipartFile } from '@fastify/multipart';
import type { Readable } from 'node:stream';
import { deferredIdempotentRequest, uploadDigest } from '../../../idempotency/idempotency.js';
import type { Batch, BatchItemView, BatchRequest, BatchService } from '../../../batches/batches.js';
import type { RowsSource } from '../../../batches/batch-rows.js';
import { BATCH_UPLOAD_MAX_BYTES } from '../../../batches/batch-bounds.js';
import { AppError, ValidationError } from '../../../shared/errors.js';
import { EXAMPLE_TEMPLATE_ID } from '../../examples.js';
import { Nullable, PageQuery, StringEnum, errorResponses, isoTime } from '../../schemas.js';
import { checkBody } from '../../validation.js';
import {
  DocumentWarnings,
  IdempotencyHeaders,
  checkDeliveryOptions,
  generationFields,
  generationOptions,
} from './pdf.js';

const { data: _data, einvoice: _einvoice, ...shared } = generationFields;

const BatchFields = {
  ...shared,
  filename: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 100,
        pattern: '^[A-Za-z0-9_.-]+$',
        description: 'Name of the zip or merged PDF, without extension (default batch-<id>)',
      }),
    ),
  ),
  output: Type.Optional(
    StringEnum(['links', 'zip', 'merged'] as const, {
      default: 'links',
      description:
        'links: a signed link per item; zip: one zip; merged: one PDF with an outline entry per item (≤ 2000 items)',
    }),
  ),
  webhook_url: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 2083,
        description: 'Receives pdf.batch.completed / .cancelled / .failed (as create-async’s webhook_url)',
      }),
    ),
  ),
  webhook_secret: Type.Optional(
    Nullable(
      Type.String({
        minLength: 16,
        maxLength: 256,
        description: 'Signs the webhooks; needs webhook_url. Stored encrypted, never returned',
      }),
    ),
  ),
  webhook_per_item: Type.Optional(
    Type.Boolean({ default: false, description: 'Also a pdf.completed / pdf.failed webhook per item' }),
  ),
};

const BatchBody = Type.Object(
  {
    ...BatchFields,
    items: Type.Optional(Type.Array(Type.Unknown(), { description: 'The rows: [{data: {…}, filename?}, …]' })),
    items_csv: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'The rows as CSV text: a header row of field keys (and _filename), one row per document',
      }),
    ),
    items_ndjson: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'The rows as NDJSON: one JSON object per line, {data, filename?} or the data itself',
      }),
    ),
  },
  {
    examples: [
      {
        template_id: EXAMPLE_TEMPLATE_ID,
        output: 'zip',
        items: [{ data: { invoice_number: 'INV-1' }, filename: 'INV-1' }, { data: { invoice_number: 'INV-2' } }],
      },
    ],
  },
);
type BatchBody = Static<typeof BatchBody>;
/** The form fields of a multipart batch, checked against the same schema. */
const FormBody = Type.Object(BatchFields);

const AcceptedAnswer = Type.Object({
  batch_id: Type.String({ description: 'Batch ID: read it with GET /v1/pdf/batches/{batch_id}' }),
  status: StringEnum(['pending'] as const, { description: 'Always pending: the batch is queued' }),
  total: Type.Integer({ description: 'Items (documents) in the batch' }),
  credits_remaining: Type.Integer({ description: 'Credits left after the whole batch was reserved' }),
});

const iso = (ms: number | null) => (ms === null ? null : isoTime(ms));

const ErrorObject = (what: string) =>
  Nullable(
    Type.Object({
      code: Type.String({ description: 'Coded reason, e.g. TEMPLATE_RENDER_ERROR' }),
      message: Type.String({ description: 'What happened, for a person' }),
    }),
    { description: what },
  );

const BatchSchema = Type.Object(
  {
    batch_id: Type.String({ description: 'Batch ID' }),
    status: StringEnum(
      [
        'pending',
        'processing',
        'cancelling',
        'assembling',
        'completed',
        'completed_with_errors',
        'failed',
        'cancelled',
      ] as const,
      {
        description:
          'pending, processing, cancelling (a cancel is refunding the items not started and waits for those rendering), assembling (building the zip or merged PDF), then completed, completed_with_errors, failed (nothing delivered) or cancelled',
      },
    ),
    template_id: Type.String({ description: 'Template every item renders' }),
    version: Nullable(
      Type.Object({
        number: Type.Integer({ description: 'Version number' }),
        tag: Nullable(Type.String({ description: 'Its tag when the batch was accepted' })),
      }),
      { description: 'The template version the items render; null: the draft' },
    ),
    output: StringEnum(['links', 'zip', 'merged'] as const, { description: 'links, zip or merged' }),
    total: Type.Integer({ description: 'Items in the batch' }),
    completed: Type.Integer({ description: 'Items delivered (charged)' }),
    failed: Type.Integer({ description: 'Items that failed for good (refunded)' }),
    cancelled: Type.Integer({ description: 'Items a cancel stopped (refunded)' }),
    processing: Type.Integer({ description: 'Items rendering now' }),
    pending: Type.Integer({ description: 'Items not started' }),
    created_at: Type.String({ format: 'date-time', description: 'When the batch was accepted' }),
    started_at: Nullable(Type.String({ format: 'date-time', description: 'When its first item ended' })),
    completed_at: Nullable(Type.String({ format: 'date-time', description: 'When the batch ended' })),
    estimated_seconds_left: Nullable(
      Type.Integer({ description: 'While it runs, from the rate so far; null until two items are done' }),
    ),
    result: Nullable(
      Type.Object({
        url: Nullable(Type.String({ description: 'Signed download link (null with store_s3)' })),
        filename: Type.String({ description: 'File name, .zip or .pdf' }),
        expires_at: Nullable(Type.String({ format: 'date-time', description: 'When url expires' })),
        s3_bucket: Nullable(Type.String({ description: 'Bucket, with store_s3' })),
        s3_key: Nullable(Type.String({ description: 'Key, with store_s3' })),
      }),
      { description: 'The zip or merged PDF once built (null for links: the items carry them)' },
    ),
    error: ErrorObject('Why the batch ended without its zip or merged file (ASSEMBLY_FAILED), else null'),
  },
  { $id: 'Batch', description: 'A batch of documents from one template' },
);

const ItemSchema = Type.Object(
  {
    index: Type.Integer({ description: 'Row number from 0' }),
    status: StringEnum(['pending', 'processing', 'completed', 'failed', 'cancelled'] as const, {
      description: "The item's state",
    }),
    filename: Type.String({ description: 'Its file name, ending in .pdf' }),
    url: Nullable(Type.String({ description: 'Signed download link once completed (not with store_s3)' })),
    expires_at: Nullable(Type.String({ format: 'date-time', description: 'When url expires' })),
    s3_bucket: Nullable(Type.String({ description: 'Bucket, with store_s3' })),
    s3_key: Nullable(Type.String({ description: 'Key, with store_s3' })),
    error: ErrorObject('Why it failed or was cancelled (BATCH_CANCELLED), else null'),
    warnings: DocumentWarnings,
  },
  { description: 'One document of a batch' },
);

function batchJson(b: Batch): Static<typeof BatchSchema> {
  return {
    batch_id: b.id,
    status: b.status,
    template_id: b.templateId,
    version: b.version,
    output: b.output,
    total: b.total,
    completed: b.completed,
    failed: b.failed,
    cancelled: b.cancelled,
    processing: b.processing,
    pending: b.pending,
    created_at: isoTime(b.createdAt),
    started_at: iso(b.startedAt),
    completed_at: iso(b.completedAt),
    estimated_seconds_left: b.estimatedSecondsLeft,
    result: b.result
      ? {
          url: b.result.url,
          filename: b.result.filename,
          expires_at: iso(b.result.expiresAt),
          s3_bucket: b.result.s3Bucket,
          s3_key: b.result.s3Key,
        }
      : null,
    error: b.error,
  };
}

function itemJson(item: BatchItemView): Static<typeof ItemSchema> {
  return {
    index: item.index,
    status: item.status,
    filename: item.filename,
    url: item.url,
    expires_at: iso(item.expiresAt),
    s3_bucket: item.s3Bucket,
    s3_key: item.s3Key,
    error: item.error,
    ...(item.warnings.length > 0 ? { warnings: item.warnings } : {}),
  };
}

type Fields = Static<typeof FormBody>;

/** A request's batch, whichever way its rows came; `idempotencyBody` is the whole request, fingerprinted once the rows are read. */
function batchRequest(
  request: FastifyRequest,
  body: Fields,
  rows: RowsSource,
  idempotencyBody: () => unknown,
): BatchRequest {
  checkDeliveryOptions(body);
  const options = generationOptions({ ...body, data: {}, export_type: 'url', filename: null });
  if (body.webhook_secret != null && body.webhook_url == null) {
    throw new ValidationError([
      {
        loc: ['body', 'webhook_secret'],
        msg: 'webhook_secret signs webhooks; it needs webhook_url',
        type: 'value_error',
      },
    ]);
  }
  return {
    templateId: body.template_id,
    rows,
    output: body.output ?? 'links',
    filename: body.filename ?? null,
    options,
    webhookUrl: body.webhook_url ?? null,
    webhookSecret: body.webhook_secret ?? null,
    webhookPerItem: body.webhook_per_item ?? false,
    idempotency: deferredIdempotentRequest(
      request.headers['idempotency-key'] as string | undefined,
      'pdf.batches',
      idempotencyBody,
    ),
  };
}

function jsonRows(body: BatchBody): RowsSource {
  const given = (['items', 'items_csv', 'items_ndjson'] as const).filter((key) => body[key] !== undefined);
  if (given.length !== 1) {
    throw new ValidationError([
      {
        loc: ['body', given[1] ?? 'items'],
        msg: 'Give the rows exactly once: items, items_csv or items_ndjson (or upload a rows file)',
        type: 'value_error',
      },
    ]);
  }
  if (body.items) return { kind: 'items', items: body.items };
  if (body.items_csv) return { kind: 'csv', field: 'items_csv', text: body.items_csv };
  return { kind: 'ndjson', field: 'items_ndjson', text: body.items_ndjson! };
}

/** Form fields as the JSON body would have them: booleans, numbers, and `options` (a JSON object) spread in. */
function formBody(fields: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (key === 'options') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        throw new ValidationError([
          { loc: ['body', 'options'], msg: 'options is a JSON object of the batch fields', type: 'json_invalid' },
        ]);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new ValidationError([{ loc: ['body', 'options'], msg: 'options is a JSON object', type: 'dict_type' }]);
      Object.assign(body, parsed);
    } else if (['store_s3', 'tagged', 'pdf_ua', 'webhook_per_item'].includes(key))
      body[key] = value === 'true' ? true : value === 'false' ? false : value;
    else if (key === 'expiration' && /^\d+$/.test(value)) body[key] = Number(value);
    else if (key === 'version' && /^\d+$/.test(value)) body[key] = Number(value);
    else body[key] = value;
  }
  return body;
}

/**
 * A multipart batch: the form fields, then one file part `rows`, which is read as the rows are
 * checked (fields after the file are refused: the batch is decided while the file streams). The file's
 * SHA-256 is taken as it streams, so an Idempotency-Key covers its bytes, not only its name.
 */
async function multipartBatch(
  request: FastifyRequest,
  accept: (body: Fields, rows: RowsSource, idemBody: () => unknown) => Promise<unknown>,
): Promise<unknown> {
  const fields: Record<string, string> = {};
  for await (const part of request.parts({
    limits: { fileSize: BATCH_UPLOAD_MAX_BYTES, files: 1, fields: 40, fieldSize: 1024 * 1024 },
  })) {
    if (part.type === 'field') {
      fields[part.fieldname] = String(part.value);
      continue;
    }
    const file = part as MultipartFile;
    if (file.fieldname !== 'rows')
      throw new ValidationError([
        { loc: ['body', file.fieldname], msg: 'The rows file part is named "rows"', type: 'value_error' },
      ]);
    const name = file.filename.toLowerCase();
    const kind =
      file.mimetype.includes('ndjson') || name.endsWith('.ndjson') || name.endsWith('.jsonl')
        ? 'ndjson'
        : file.mimetype.includes('csv') || name.endsWith('.csv')
          ? 'csv'
          : undefined;
    if (!kind)
      throw new ValidationError([
        {
          loc: ['body', 'rows'],
          msg: 'The rows file is a .csv (text/csv) or .ndjson (application/x-ndjson) file',
          type: 'value_error',
        },
      ]);
    const body = formBody(fields);
    checkBody(FormBody, body);
    const stream = file.file as Readable & { truncated?: boolean };
    const upload = uploadDigest(stream);
    try {
      return await accept(body as Fields, { kind, field: 'rows', text: upload.stream }, () => ({
        ...body,
        rows: { filename: file.filename, sha256: upload.digest() },
      }));
    } finally {
      // The rest of a refused upload is read and thrown away, so the client reads the answer.
      stream.unpipe();
      stream.resume();
      if (stream.truncated) {
        // biome-ignore lint/correctness/noUnsafeFinally: a truncated upload is the answer, whatever accept() said
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `The rows file is larger than ${BATCH_UPLOAD_MAX_BYTES} bytes (100 MiB); split it into several batches. Nothing was charged.`,
        );
      }
    }
  }
  throw new ValidationError([
    {
      loc: ['body', 'rows'],
      msg: 'A multipart batch has a file part named "rows" (a CSV or NDJSON file) after its fields',
      type: 'missing',
    },
  ]);
}

export function batchRoutes(app: FastifyInstance, deps: { batches: BatchService }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addSchema(BatchSchema);
  const { batches } = deps;

  r.post('/v1/pdf/batches', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'createPdfBatch',
      tags: ['PDF Batches'],
      summary: 'Start a batch',
      description:
        "Many documents from one template: rows as items, CSV or NDJSON (or a multipart upload of a rows file). Every row is checked against the template's fields " +
        'before anything is charged (422 naming rows and fields); then one credit per item is reserved (402 if the account cannot cover it), refunded for items that fail or are cancelled.',
      body: BatchBody,
      headers: IdempotencyHeaders,
      response: { 202: AcceptedAnswer, ...errorResponses(400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 503) },
    },
    // multipart bodies are validated by checkBody once their fields are read.
    validatorCompiler:
      ({ schema }) =>
      (data) =>
        data === undefined || data === null ? { value: data } : (checkBody(schema as object, data), { value: data }),
    handler: async (request, reply) => {
      const accept = async (body: Fields, rows: RowsSource, idemBody: () => unknown) =>
        batches.accept(request.caller.accountId, batchRequest(request, body, rows, idemBody));
      const accepted = (
        request.isMultipart()
          ? await multipartBatch(request, accept)
          : await accept(request.body as BatchBody, jsonRows(request.body as BatchBody), () => request.body)
      ) as Awaited<ReturnType<BatchService['accept']>>;
      return reply.code(202).send({
        batch_id: accepted.batchId,
        status: 'pending',
        total: accepted.total,
        credits_remaining: accepted.creditsRemaining,
      });
    },
  });

  r.get('/v1/pdf/batches', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'listPdfBatches',
      tags: ['PDF Batches'],
      summary: 'List batches',
      description: "The caller's batches, newest first.",
      querystring: Type.Object({ ...PageQuery({ default: 20, max: 100 }) }),
      response: {
        200: Type.Object({
          batches: Type.Array(Type.Unsafe({ $ref: 'Batch#' }), { description: 'This page of batches' }),
          total: Type.Integer({ description: 'Batches of the account, all pages' }),
          limit: Type.Integer({ description: 'Page size applied' }),
          offset: Type.Integer({ description: 'Records skipped' }),
        }),
        ...errorResponses(401, 422, 429),
      },
    },
    handler: async (request) => {
      const limit = request.query.limit ?? 20;
      const offset = request.query.offset ?? 0;
      const { batches: rows, total } = await batches.list(request.caller.accountId, { limit, offset });
      return { batches: rows.map(batchJson), total, limit, offset };
    },
  });

  const BatchParams = Type.Object({
    batch_id: Type.String({ maxLength: 64, description: 'Batch ID, as POST /v1/pdf/batches answered it' }),
  });

  r.get('/v1/pdf/batches/:batch_id', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'getPdfBatch',
      tags: ['PDF Batches'],
      summary: 'Get a batch',
      description:
        'Its state, counts, an estimate of the time left while it runs, and its zip or merged PDF once built.',
      params: BatchParams,
      response: { 200: Type.Unsafe({ $ref: 'Batch#' }), ...errorResponses(401, 404, 422, 429) },
    },
    handler: async (request) => batchJson(await batches.get(request.caller.accountId, request.params.batch_id)),
  });

  r.get('/v1/pdf/batches/:batch_id/items', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'listPdfBatchItems',
      tags: ['PDF Batches'],
      summary: "A batch's items",
      description: 'The items in row order, with their link or error, optionally of one status.',
      params: BatchParams,
      querystring: Type.Object({
        ...PageQuery({ default: 100, max: 1000 }),
        status: Type.Optional(
          StringEnum(['pending', 'processing', 'completed', 'failed', 'cancelled'] as const, {
            description: 'Only items in this state',
          }),
        ),
      }),
      response: {
        200: Type.Object({
          items: Type.Array(ItemSchema, { description: 'This page of items, in row order' }),
          total: Type.Integer({ description: 'Items matching the filter, all pages' }),
          limit: Type.Integer({ description: 'Page size applied' }),
          offset: Type.Integer({ description: 'Records skipped' }),
        }),
        ...errorResponses(401, 404, 422, 429),
      },
    },
    handler: async (request) => {
      const limit = request.query.limit ?? 100;
      const offset = request.query.offset ?? 0;
      const { items, total } = await batches.items(request.caller.accountId, request.params.batch_id, {
        status: request.query.status,
        limit,
        offset,
      });
      return { items: items.map(itemJson), total, limit, offset };
    },
  });

  r.post('/v1/pdf/batches/:batch_id/cancel', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'cancelPdfBatch',
      tags: ['PDF Batches'],
      summary: 'Cancel a batch',
      description:
        'Stops every item that has not started (each refunded); items rendering finish. Answers at once with the batch `cancelling`; the refunds follow within moments, and the batch ends `cancelled`. A finished batch is answered as it is.',
      params: BatchParams,
      response: { 200: Type.Unsafe({ $ref: 'Batch#' }), ...errorResponses(401, 404, 422, 429) },
    },
    handler: async (request) => batchJson(await batches.cancel(request.caller.accountId, request.params.batch_id)),
  });
}
