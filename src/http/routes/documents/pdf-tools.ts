/**
 * `POST /v1/pdf-tools/{merge,extract-pages,rotate}`: TemplateFox's PDF tools, 1 credit each
 * (docs/pdf-tools.md); the finishing tools (split, flatten, watermark, …) are pdf-finishing-tools.ts.
 */
import { Type, type Static, type TSchema } from 'typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { GenerationResult } from '../../../credits/paid-request.js';
import { idempotentRequest } from '../../../idempotency/idempotency.js';
import type { PdfSource, PdfToolService, ToolOutput, ToolRequest } from '../../../pdf-tools/pdf-tools.js';
import { EXAMPLE_PDF_BASE64 } from '../../pdf-examples.js';
import { Nullable, StringEnum, errorResponses } from '../../schemas.js';
import { setWarningHeaders } from '../../warning-headers.js';
import { DocumentWarnings, IdempotencyHeaders, jsonAnswer, sendPdf, settleWhenAnswered } from './pdf.js';

const ANGLE = { type: 'integer', enum: [0, 90, 180, 270] } as const;

export const sourceFields = {
  pdf_url: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 2083,
        description:
          'HTTPS URL the PDF is downloaded from (public addresses only; redirects are followed and checked again). Give this or pdf_base64',
      }),
    ),
  ),
  pdf_base64: Type.Optional(
    Nullable(Type.String({ minLength: 1, description: 'The PDF file, base64-encoded. Give this or pdf_url' })),
  ),
};

const PdfInput = Type.Object(sourceFields, { description: 'Either pdf_url (HTTPS) or pdf_base64 — exactly one' });

/** The field of every tool that would break an input's signatures (docs/pdf-tools.md "Signed inputs"). */
export const signedInputFields = {
  allow_breaking_signatures: Type.Optional(
    Nullable(
      Type.Boolean({
        default: false,
        description:
          'A signed input is refused (422 `pdf_signed`, nothing charged): this tool would invalidate its signatures, or make a new document they do not cover. ' +
          '`true`: do it anyway; the answer then carries a SIGNATURES_INVALIDATED warning',
      }),
    ),
  ),
};

/** The delivery fields every tool shares: as on POST /v1/pdf/create. */
export const outputFields = {
  export_type: Type.Optional(
    StringEnum(['url', 'binary'] as const, {
      default: 'url',
      description: '`url`: JSON with a signed download link; `binary`: the PDF bytes (application/pdf)',
    }),
  ),
  expiration: Type.Optional(
    Type.Integer({
      minimum: 60,
      maximum: 604_800,
      default: 86_400,
      description: 'Seconds until the URL expires (60–604800); `url` only',
    }),
  ),
  filename: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 100,
        pattern: '^[A-Za-z0-9_.-]+$',
        description: 'File name without the .pdf extension (default "document")',
      }),
    ),
  ),
};

const ToolAnswer = Type.Object(
  {
    url: Type.String({ description: 'Signed download link' }),
    filename: Type.String({ description: 'File name, ending in .pdf' }),
    credits_remaining: Type.Integer({ description: 'Credits left after this one' }),
    expires_in: Type.Integer({ description: 'Seconds until the link expires' }),
    warnings: DocumentWarnings,
  },
  { description: 'export_type url' },
);

/** 200: the link as JSON, or the PDF itself for `binary` (declared per media type, so a generated client reads bytes as bytes). */
const answerResponse = Type.Unsafe<unknown>({
  description: 'The link (JSON), or the PDF itself for export_type binary',
  content: {
    'application/json': { schema: ToolAnswer },
    'application/pdf': {
      schema: { type: 'string', format: 'binary', contentMediaType: 'application/pdf', description: 'The PDF file' },
    },
  },
});

export const responses = { 200: answerResponse, ...errorResponses(401, 402, 409, 413, 422, 429, 500, 502, 504) };

function mergeBody(maxInputs: number) {
  return Type.Object(
    {
      pdfs: Type.Array(PdfInput, {
        minItems: 2,
        maxItems: maxInputs,
        description: `The PDFs to merge, in order: 2 to ${maxInputs}, each with pdf_url or pdf_base64`,
      }),
      ...signedInputFields,
      ...outputFields,
    },
    {
      examples: [
        {
          pdfs: [{ pdf_base64: EXAMPLE_PDF_BASE64 }, { pdf_base64: EXAMPLE_PDF_BASE64 }],
          export_type: 'url',
          filename: 'merged',
        },
      ],
    },
  );
}

const ExtractBody = Type.Object(
  {
    ...sourceFields,
    pages: Type.String({
      minLength: 1,
      maxLength: 10_000,
      description:
        '1-based pages and ranges separated by commas, e.g. "1-3, 5"; the order given is the order of the result ("3, 1-2")',
    }),
    ...signedInputFields,
    ...outputFields,
  },
  { examples: [{ pdf_base64: EXAMPLE_PDF_BASE64, pages: '1, 1', export_type: 'url', filename: 'extracted' }] },
);

const RotateBody = Type.Object(
  {
    ...sourceFields,
    // Written out: Nullable() would leave null out of the enum.
    rotation: Type.Optional(
      Type.Unsafe<number | null>({
        type: ['integer', 'null'],
        enum: [...ANGLE.enum, null],
        description:
          'Turn every page clockwise by 0, 90, 180 or 270 degrees, added to its own rotation. Give this or page_rotations',
      }),
    ),
    page_rotations: Type.Optional(
      Nullable(
        Type.Record(Type.String(), Type.Unsafe<number>({ ...ANGLE }), {
          description:
            'Turn some pages: page number (from 1) → 0, 90, 180 or 270 degrees clockwise, added to its own rotation, e.g. {"3": 90}. Give this or rotation',
        }),
      ),
    ),
    ...signedInputFields,
    ...outputFields,
  },
  { examples: [{ pdf_base64: EXAMPLE_PDF_BASE64, rotation: 90, export_type: 'url', filename: 'rotated' }] },
);

export type Output = {
  export_type?: 'url' | 'binary';
  expiration?: number;
  filename?: string | null;
  allow_breaking_signatures?: boolean | null;
};
export type Source = { pdf_url?: string | null; pdf_base64?: string | null };

export const source = (s: Source): PdfSource => ({ pdfUrl: s.pdf_url ?? null, pdfBase64: s.pdf_base64 ?? null });

/** Who asks, how the result is handed over, and the Idempotency-Key over this endpoint and body. */
export function toolRequest(
  request: { caller: { accountId: string }; headers: Record<string, unknown>; body: unknown },
  endpoint: string,
): ToolRequest {
  const body = request.body as Output;
  const output: ToolOutput = {
    exportType: body.export_type ?? 'url',
    expirationSeconds: body.expiration ?? 86_400,
    filename: body.filename ?? 'document',
  };
  return {
    accountId: request.caller.accountId,
    output,
    idempotency: idempotentRequest(request.headers['idempotency-key'] as string | undefined, endpoint, body),
    allowBreakingSignatures: body.allow_breaking_signatures === true,
  };
}

/** The link as JSON or the bytes; the charge is posted once the answer reached the connection. */
export function answer(reply: FastifyReply, result: GenerationResult, output: ToolOutput): FastifyReply {
  settleWhenAnswered(reply, result);
  const json = jsonAnswer(result, output.expirationSeconds);
  if (json) return reply.send(json);
  const d = result.delivery as Extract<GenerationResult['delivery'], { kind: 'binary' }>;
  return sendPdf(setWarningHeaders(reply, result.warnings), d.pdf, d.filename, result.creditsRemaining);
}

export function schema(operationId: string, summary: string, description: string, body: TSchema) {
  return {
    operationId,
    tags: ['PDF Tools'],
    summary,
    description,
    body,
    headers: IdempotencyHeaders,
    response: responses,
  };
}

/** One charged PDF tool that answers a link or the bytes: its route, its document, and the call it makes. */
export interface ToolRoute<B extends TSchema = TSchema> {
  /** Under /v1/pdf-tools/; also the Idempotency-Key's endpoint, pdf-tools.<path>. */
  path: string;
  operationId: string;
  summary: string;
  description: string;
  body: B;
  run(pdfTools: PdfToolService, base: ToolRequest, body: Static<B>): Promise<GenerationResult>;
}

/** A route of the table, its body's type checked against its own schema. */
export const toolRoute = <B extends TSchema>(route: ToolRoute<B>): ToolRoute => route as unknown as ToolRoute;

/** Registers each tool of the table: the same auth, document, request reading and answer for all. */
export function registerToolRoutes(app: FastifyInstance, pdfTools: PdfToolService, routes: readonly ToolRoute[]): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  for (const route of routes) {
    r.post(`/v1/pdf-tools/${route.path}`, {
      config: { auth: 'api_key' },
      schema: schema(route.operationId, route.summary, route.description, route.body),
      handler: async (request, reply) => {
        const base = toolRequest(request, `pdf-tools.${route.path}`);
        return answer(reply, await route.run(pdfTools, base, request.body as Static<TSchema>), base.output);
      },
    });
  }
}

export const CHARGING =
  ' **Credits:** 1 per call, charged only when the result is delivered. An input that cannot be downloaded, is not a PDF, is encrypted or is over the bounds ' +
  '(bytes, PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES; pages) is a 422 naming the input, and costs nothing. An `Idempotency-Key` header makes retries safe.';

/** Said by every tool that would break an input's signatures. */
export const SIGNED =
  ' A signed input is a 422 `pdf_signed` (nothing charged), unless `allow_breaking_signatures: true`: then the result carries a SIGNATURES_INVALIDATED warning.';

export function pdfToolRoutes(app: FastifyInstance, deps: { pdfTools: PdfToolService; maxMergeInputs: number }): void {
  registerToolRoutes(app, deps.pdfTools, [
    toolRoute({
      path: 'merge',
      operationId: 'mergePdf',
      summary: 'Merge PDFs',
      description: `Concatenates 2 or more PDFs into one, in the order given. Each input is an HTTPS URL or base64.${SIGNED}${CHARGING}`,
      body: mergeBody(deps.maxMergeInputs),
      run: (tools, base, body) => tools.merge({ ...base, pdfs: body.pdfs.map(source) }),
    }),
    toolRoute({
      path: 'extract-pages',
      operationId: 'extractPdfPages',
      summary: 'Extract pages from a PDF',
      description: `A new PDF of the selected pages, in the order given: "5,1,3" gives those three pages in that order; a page may be named twice.${SIGNED}${CHARGING}`,
      body: ExtractBody,
      run: (tools, base, body) => tools.extractPages({ ...base, pdf: source(body), pages: body.pages }),
    }),
    toolRoute({
      path: 'rotate',
      operationId: 'rotatePdf',
      summary: 'Rotate pages of a PDF',
      description: `Turns every page by one angle (\`rotation\`) or the pages a map names (\`page_rotations\`), clockwise, added to each page's own rotation. Angles: 0, 90, 180, 270.${SIGNED}${CHARGING}`,
      body: RotateBody,
      run: (tools, base, body) =>
        tools.rotate({ ...base, pdf: source(body), rotation: body.rotation, pageRotations: body.page_rotations }),
    }),
  ]);
}
