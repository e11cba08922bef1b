/**
 * `POST /v1/pdf-tools/{split,flatten,watermark,metadata,protect,unlock}`: the finishing steps for a
 * PDF made elsewhere (docs/finishing.md), with the inputs, delivery fields and charging of the other
 * PDF tools (pdf-tools.ts): 1 credit each on delivery, refusals free.
 */
import { Type, type Static } from 'typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { GenerationResult } from '../../../credits/paid-request.js';
import { MetadataSchema, ProtectSchema, WatermarkSchema } from '../../../finishing/requested/finishing-requests.js';
import type { PdfToolService } from '../../../pdf-tools/pdf-tools.js';
import { MAX_SPLIT_PARTS } from '../../../pdf-tools/split.js';
import { attachmentDisposition } from '../../../storage/content-disposition.js';
import { EXAMPLE_ENCRYPTED_PDF_BASE64, EXAMPLE_PDF_BASE64 } from '../../pdf-examples.js';
import { Nullable, StringEnum, errorResponses } from '../../schemas.js';
import { setWarningHeaders, warningsField } from '../../warning-headers.js';
import { DocumentWarnings, IdempotencyHeaders, settleWhenAnswered } from './pdf.js';
import {
  CHARGING,
  SIGNED,
  outputFields,
  registerToolRoutes,
  signedInputFields,
  source,
  sourceFields,
  toolRequest,
  toolRoute,
} from './pdf-tools.js';

const example = { pdf_base64: EXAMPLE_PDF_BASE64, export_type: 'url', filename: 'finished' };

const SplitBody = Type.Object(
  {
    ...sourceFields,
    ranges: Type.Optional(
      Nullable(
        Type.Array(
          Type.String({
            minLength: 1,
            maxLength: 25,
            description: 'A page ("3"), a range ("1-3") or a range to the end ("4-")',
          }),
          {
            minItems: 1,
            maxItems: MAX_SPLIT_PARTS,
            description: `One part per range, in the order given, e.g. ["1-3", "4-"]. Give this or every; at most ${MAX_SPLIT_PARTS} parts`,
          },
        ),
      ),
    ),
    every: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          description: `Cut into parts of this many pages (the last may be shorter). Give this or ranges; at most ${MAX_SPLIT_PARTS} parts`,
        }),
      ),
    ),
    ...signedInputFields,
    export_type: Type.Optional(
      StringEnum(['url', 'zip', 'binary'] as const, {
        default: 'url',
        description:
          "`url`: JSON with a signed link per part; `zip`: JSON with one signed link to a zip of the parts; `binary`: that zip's bytes (application/zip)",
      }),
    ),
    expiration: outputFields.expiration,
    filename: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 100,
          pattern: '^[A-Za-z0-9_.-]+$',
          description:
            'Base name: parts are <filename>-<pages>.pdf (document-1-3.pdf), the zip <filename>.zip; default "document"',
        }),
      ),
    ),
  },
  { examples: [{ pdf_base64: EXAMPLE_PDF_BASE64, ranges: ['1', '1-'], export_type: 'url', filename: 'part' }] },
);

const SplitAnswer = Type.Object(
  {
    files: Type.Array(
      Type.Object({
        url: Type.String({ description: 'Signed download link of this part' }),
        filename: Type.String({ description: "The part's file name: <filename>-<pages>.pdf" }),
        pages: Type.String({ description: 'The pages of the input it holds, e.g. "1-3"' }),
      }),
      { description: 'The parts, in order' },
    ),
    credits_remaining: Type.Integer({ description: 'Credits left after this one' }),
    expires_in: Type.Integer({ description: 'Seconds until the links expire' }),
    warnings: DocumentWarnings,
  },
  { description: 'export_type url' },
);

const ZipAnswer = Type.Object(
  {
    url: Type.String({ description: 'Signed download link of the zip' }),
    filename: Type.String({ description: 'File name, ending in .zip' }),
    credits_remaining: Type.Integer({ description: 'Credits left after this one' }),
    expires_in: Type.Integer({ description: 'Seconds until the link expires' }),
    warnings: DocumentWarnings,
  },
  { description: 'export_type zip' },
);

const splitResponses = {
  200: Type.Unsafe<unknown>({
    description: 'Links to the parts, or to their zip (JSON), or the zip itself for export_type binary',
    content: {
      'application/json': { schema: Type.Union([SplitAnswer, ZipAnswer]) },
      'application/zip': {
        schema: {
          type: 'string',
          format: 'binary',
          contentMediaType: 'application/zip',
          description: 'A zip of the parts',
        },
      },
    },
  }),
  ...errorResponses(401, 402, 409, 413, 422, 429, 500, 502, 504),
};

const FlattenBody = Type.Object({ ...sourceFields, ...signedInputFields, ...outputFields }, { examples: [example] });
const WatermarkBody = Type.Object(
  { ...sourceFields, watermark: WatermarkSchema, ...signedInputFields, ...outputFields },
  {
    examples: [
      {
        ...example,
        watermark: { text: 'CONFIDENTIAL', opacity: 0.25, rotation: 45, font_size: 40, color: '#C00000', pages: '1' },
      },
    ],
  },
);
const MetadataBody = Type.Object(
  { ...sourceFields, metadata: MetadataSchema, ...signedInputFields, ...outputFields },
  {
    examples: [
      {
        ...example,
        metadata: {
          title: 'Invoice 2026-0042',
          author: 'Acme GmbH',
          subject: 'Invoice',
          keywords: ['invoice', '2026'],
        },
      },
    ],
  },
);
const ProtectBody = Type.Object(
  { ...sourceFields, protect: ProtectSchema, ...signedInputFields, ...outputFields },
  {
    examples: [
      { ...example, protect: { owner_password: 'owner-secret', permissions: { printing: 'high', copying: false } } },
    ],
  },
);
const UnlockBody = Type.Object(
  {
    ...sourceFields,
    password: Type.String({
      minLength: 1,
      maxLength: 127,
      writeOnly: true,
      description: "The PDF's user or owner password; a wrong one is a 422 at body.password. Never echoed or logged",
    }),
    ...signedInputFields,
    ...outputFields,
  },
  {
    examples: [
      { pdf_base64: EXAMPLE_ENCRYPTED_PDF_BASE64, password: 'example-owner', export_type: 'url', filename: 'unlocked' },
    ],
  },
);

/** Split's answer: the links as JSON, the zip's link as JSON, or the zip's bytes. */
function splitAnswer(reply: FastifyReply, result: GenerationResult, expirationSeconds: number): FastifyReply {
  settleWhenAnswered(reply, result);
  const d = result.delivery;
  const expiresIn = (expiresAt: number) =>
    result.replayed ? Math.max(0, Math.ceil((expiresAt - Date.now()) / 1000)) : expirationSeconds;
  const warnings = warningsField(result.warnings);
  if (d.kind === 'urls') {
    const files = d.files.map((f) => ({ url: f.url, filename: f.filename, pages: f.label }));
    return reply.send({
      files,
      credits_remaining: result.creditsRemaining,
      expires_in: expiresIn(d.expiresAt),
      ...warnings,
    });
  }
  if (d.kind === 'url')
    return reply.send({
      url: d.url,
      filename: d.filename,
      credits_remaining: result.creditsRemaining,
      expires_in: expiresIn(d.expiresAt),
      ...warnings,
    });
  if (d.kind !== 'binary') throw new Error(`split delivered as ${d.kind}`);
  return setWarningHeaders(reply, result.warnings)
    .code(200)
    .header('content-type', 'application/zip')
    .header('content-disposition', attachmentDisposition(d.filename))
    .header('x-credits-remaining', String(result.creditsRemaining))
    .send(d.pdf);
}

const ENCRYPTED = ' An encrypted input is a 422 naming it (unlock it first).';

export function finishingToolRoutes(app: FastifyInstance, deps: { pdfTools: PdfToolService }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post('/v1/pdf-tools/split', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'splitPdf',
      tags: ['PDF Tools'],
      summary: 'Split a PDF into parts',
      description: `Cuts one PDF into several, by \`ranges\` or \`every\` n pages: a link per part, or one zip (\`export_type\` zip or binary). One credit for the whole split.${ENCRYPTED}${SIGNED}${CHARGING}`,
      body: SplitBody,
      headers: IdempotencyHeaders,
      response: splitResponses,
    },
    handler: async (request, reply) => {
      const body = request.body as Static<typeof SplitBody>;
      const exportType = body.export_type ?? 'url';
      const base = toolRequest(
        {
          caller: request.caller,
          headers: request.headers,
          body: { ...body, export_type: exportType === 'binary' ? 'binary' : 'url' },
        },
        'pdf-tools.split',
      );
      // The key's fingerprint covers the whole body, export_type as sent.
      const idempotency = toolRequest(request, 'pdf-tools.split').idempotency;
      const result = await deps.pdfTools.split({
        ...base,
        idempotency,
        pdf: source(body),
        with: { ranges: body.ranges, every: body.every },
        parts: exportType === 'url' ? 'links' : 'zip',
      });
      return splitAnswer(reply, result, base.output.expirationSeconds);
    },
  });

  registerToolRoutes(app, deps.pdfTools, [
    toolRoute({
      path: 'flatten',
      operationId: 'flattenPdf',
      summary: 'Flatten form fields and annotations',
      description: `Draws form fields (with their values) and annotations into the page content and removes the form, so nothing can be edited or filled in any more.${ENCRYPTED}${SIGNED}${CHARGING}`,
      body: FlattenBody,
      run: (tools, base, body) => tools.flatten({ ...base, pdf: source(body), with: undefined }),
    }),
    toolRoute({
      path: 'watermark',
      operationId: 'watermarkPdf',
      summary: 'Watermark a PDF',
      description: `Draws a text or an image asset over (or under) the pages named, as \`watermark\` on POST /v1/pdf/create does; pages past the end are a 422.${ENCRYPTED}${SIGNED}${CHARGING}`,
      body: WatermarkBody,
      run: (tools, base, body) => tools.watermark({ ...base, pdf: source(body), with: body.watermark }),
    }),
    toolRoute({
      path: 'metadata',
      operationId: 'setPdfMetadata',
      summary: "Set a PDF's document information",
      description: `Writes title, author, subject, keywords and creator into the Info dictionary; entries not given stay as they are.${ENCRYPTED}${SIGNED}${CHARGING}`,
      body: MetadataBody,
      run: (tools, base, body) => tools.metadata({ ...base, pdf: source(body), with: body.metadata }),
    }),
    toolRoute({
      path: 'protect',
      operationId: 'protectPdf',
      summary: 'Encrypt a PDF with passwords and permissions',
      description: `AES-256 encryption (qpdf) with an owner password, an optional user password and permissions; text stays extractable for screen readers.${ENCRYPTED}${SIGNED}${CHARGING}`,
      body: ProtectBody,
      run: (tools, base, body) => tools.protect({ ...base, pdf: source(body), with: body.protect }),
    }),
    toolRoute({
      path: 'unlock',
      operationId: 'unlockPdf',
      summary: "Remove a PDF's encryption",
      description: `The same PDF without its encryption, given its user or owner password. A wrong password is a 422 at body.password; an input that is not encrypted is a 422 too.${SIGNED}${CHARGING}`,
      body: UnlockBody,
      run: (tools, base, body) => tools.unlock({ ...base, pdf: source(body), with: { password: body.password } }),
    }),
  ]);
}
