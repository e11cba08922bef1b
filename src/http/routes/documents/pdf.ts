/** `POST /v1/pdf/create`: synchronous generation, exactly as the spec describes it. */
import { Type, type Static } from 'typebox';
import { setWarningHeaders, warningsField } from '../../warning-headers.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { DocumentService, GenerationOptions, GenerationResult } from '../../../documents/documents.js';
import { idempotentRequest } from '../../../idempotency/idempotency.js';
import { attachmentDisposition } from '../../../storage/content-disposition.js';
import { ValidationError, type ValidationIssue } from '../../../shared/errors.js';
import { EXAMPLE_TEMPLATE_ID, INVOICE_DATA } from '../../examples.js';
import { EInvoiceRequestSchema } from '../../../einvoice/einvoice.js';
import { SignSchema, signatureOptions } from './sign-fields.js';
import { MetadataSchema, ProtectSchema, WatermarkSchema } from '../../../finishing/requested/finishing-requests.js';
import {
  JsonObject,
  Nullable,
  PdfBytes,
  StringEnum,
  TEMPLATE_ID,
  errorResponses,
  mediaResponse,
} from '../../schemas.js';
import { templateFoxShape, wantsTemplateFoxPropertiesOnly } from '../../templatefox-clients.js';

/** A template version named by its tag or its number (create, create-async and preview take one). */
export function versionRef(description: string) {
  // Not Nullable(): that helper takes one `type`, and this is a string or an integer.
  return Type.Union([Type.String({ minLength: 1, maxLength: 50 }), Type.Integer({ minimum: 1 }), Type.Null()], {
    description,
  });
}

/** Fields shared by both create endpoints (the async one adds webhooks and allows only `url`). */
export const generationFields = {
  template_id: TEMPLATE_ID,
  data: JsonObject({
    description:
      'Values for the template variables; keys match the template (dotted keys such as "customer.name" work). A required field of the template ' +
      'without a value (missing, null or "") is a 422 before any charge for a strict template (loc body.data.<key>), a MISSING_REQUIRED_FIELD warning otherwise',
  }),
  expiration: Type.Optional(
    Type.Integer({
      minimum: 60,
      maximum: 604_800,
      default: 86_400,
      description:
        "Seconds until the URL expires (60–604800). Applies to `url` only; accepted, with no effect, with binary or S3 (TemplateFox's Python SDK always sends the default)",
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
  store_s3: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Upload to your configured S3 bucket (POST /v1/integrations/s3) instead of a signed link',
    }),
  ),
  s3_filepath: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 500,
        pattern: '^[A-Za-z0-9_./-]*$',
        description: "Key prefix in the bucket (default: the configuration's default_prefix); needs store_s3: true",
      }),
    ),
  ),
  s3_bucket: Type.Optional(
    Nullable(
      Type.String({
        minLength: 3,
        maxLength: 63,
        pattern: '^[a-z0-9][a-z0-9.-]*[a-z0-9]$',
        description: 'Bucket (default: the configured one); needs store_s3: true',
      }),
    ),
  ),
  pdf_variant: Type.Optional(
    Nullable(
      StringEnum(['pdf/a-1b', 'pdf/a-2b', 'pdf/a-3b'] as const, {
        description: 'Archival PDF/A variant; unset gives a standard PDF. pdf/a-3b allows attachments',
      }),
    ),
  ),
  version: Type.Optional(
    versionRef(
      'Render this template version (a tag, or a version number) instead of the current draft; unknown → 404 VERSION_NOT_FOUND, nothing charged',
    ),
  ),
  tagged: Type.Optional(
    Nullable(
      Type.Boolean({
        description:
          "Overrides the template's page.tagged for this document (unset: the template's, which defaults to true). true: tagged (accessible) PDF with " +
          'structure tree and outline, which screen readers and PDF/UA need; false: no structure tree or outline, faster and smaller. With a pdf_variant ' +
          '(PDF/A level b, which does not require tags) false gives a valid untagged PDF/A file',
      }),
    ),
  ),
  pdf_ua: Type.Optional(
    Nullable(
      Type.Boolean({
        description:
          "PDF/UA-1 (accessible): overrides the template's page.pdf_ua (unset: the template's, which defaults to false). " +
          'Printed tagged, with the PDF/UA identifier, artifacts and alternative texts, and checked before the charge ' +
          "(docs/accessibility.md): a template without <html lang>, <title> or an image's alt is refused (422) naming it. " +
          'Combines with pdf_variant pdf/a-2b or pdf/a-3b',
      }),
    ),
  ),
  einvoice: Type.Optional(EInvoiceRequestSchema),
  watermark: Type.Optional(WatermarkSchema),
  metadata: Type.Optional(MetadataSchema),
  protect: Type.Optional(ProtectSchema),
  sign: Type.Optional(Nullable(SignSchema)),
  form: Type.Optional(
    Nullable(
      Type.Object(
        {
          flatten: Type.Optional(
            Type.Boolean({
              description:
                'true (the default, unless read_only): the values are drawn into the pages and the form is gone; false: the PDF stays fillable, with the values set',
            }),
          ),
          read_only: Type.Optional(
            Type.Boolean({
              description:
                'true: the fields stay, with the values set, each locked (ReadOnly); not flattened. Default false',
            }),
          ),
        },
        {
          description:
            'pdf_form templates only (docs/pdf-forms.md): how the filled form is left; 422 on another template',
        },
      ),
    ),
  ),
};

const CreateBody = Type.Object(
  {
    ...generationFields,
    export_type: Type.Optional(
      StringEnum(['url', 'binary'] as const, {
        default: 'url',
        description: '`url`: JSON with a signed download link; `binary`: the PDF bytes (application/pdf)',
      }),
    ),
  },
  {
    examples: [
      {
        template_id: EXAMPLE_TEMPLATE_ID,
        data: INVOICE_DATA,
        export_type: 'url',
        expiration: 3600,
        filename: 'invoice-0001',
      },
    ],
  },
);
type CreateBody = Static<typeof CreateBody>;

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Repeat within 24 h → the first answer, charged once' })),
});

/** What the document needed and did not get — data and resources — (issue 13); present only when there are some. */
export const DocumentWarnings = Type.Optional(
  Type.Array(
    Type.Object({
      code: Type.String({
        description:
          'MISSING_REQUIRED_FIELD, UNDEFINED_VARIABLE, INVALID_NUMBER, INVALID_DATE, EMPTY_BARCODE, ASSET_NOT_FOUND, RESOURCE_BLOCKED, RESOURCE_FAILED, RESOURCE_TIMEOUT, RESOURCE_TOO_LARGE, RESOURCE_TYPE_REFUSED, RESOURCE_LIMIT, …',
        examples: ['UNDEFINED_VARIABLE'],
      }),
      message: Type.String({ description: 'What happened, for a person' }),
      url: Type.Optional(Type.String({ description: 'The resource concerned, credentials redacted' })),
    }),
    {
      description:
        'Non-fatal issues: required fields the data lacks, variables the template prints that are not in the data, texts where a number or date belongs ' +
        '(a strict template answers 422 for these instead, charging nothing), and resources (assets, remote images, fonts, stylesheets) that did not load. ' +
        'Binary answers carry them in X-Pressroom-Warnings (count) and X-Pressroom-Warning-Details (JSON).',
    },
  ),
);

/** Which checks judged the e-invoice (issue 41); present only with `einvoice`. */
export const EInvoiceChecks = Type.Optional(
  Type.String({
    description:
      "With `einvoice`: the checks that judged it before the charge. `built-in` (the service's own checks and the syntax's schema: no official rules pack is installed, " +
      'or Factur-X MINIMUM / BASIC WL, which have no EN 16931 rules), or the official rule sets, e.g. `EN16931 1.3.16` or `EN16931 1.3.16 + XRechnung 3.0.2` (docs/einvoice.md "The official rules"). ' +
      'Binary answers carry it in X-Pressroom-Einvoice-Checks.',
    examples: ['EN16931 1.3.16 + XRechnung 3.0.2'],
  }),
);

/** Which accessibility check the PDF passed; present only under `pdf_ua`. */
export const AccessibilityChecks = Type.Optional(
  Type.String({
    description:
      'With `pdf_ua`: the machine check the PDF passed before the charge (the Matterhorn Protocol checkpoints docs/accessibility.md lists). ' +
      'Binary answers carry it in X-Pressroom-Accessibility-Checks.',
  }),
);

const UrlAnswer = Type.Object(
  {
    url: Type.String({ description: 'Signed download link' }),
    filename: Type.String({ description: 'File name, ending in .pdf' }),
    credits_remaining: Type.Integer({ description: 'Credits left after this one' }),
    expires_in: Type.Integer({ description: 'Seconds until the link expires' }),
    warnings: DocumentWarnings,
    einvoice_checks: EInvoiceChecks,
    accessibility_checks: AccessibilityChecks,
  },
  { description: 'export_type url' },
);

const S3Answer = Type.Object(
  {
    s3_bucket: Type.String({ description: 'Bucket the PDF was uploaded to' }),
    s3_key: Type.String({ description: 'Its key in the bucket' }),
    filename: Type.String({ description: 'File name, ending in .pdf' }),
    credits_remaining: Type.Integer({ description: 'Credits left after this one' }),
    warnings: DocumentWarnings,
    einvoice_checks: EInvoiceChecks,
    accessibility_checks: AccessibilityChecks,
  },
  { description: 'store_s3 true' },
);

/**
 * Delivery options that only mean something together. Unknown fields are accepted (clients send newer
 * fields). A known one this request cannot honour is refused, except where TemplateFox accepts and
 * ignores it (`s3_filepath`, `s3_bucket` without `store_s3`: its n8n node sends them whenever they are
 * filled in): those are ignored too, with a FIELD_IGNORED warning (deliveryOptions, docs/templatefox.md).
 */
export function checkDeliveryOptions(body: { store_s3?: boolean; export_type?: string }): void {
  if (body.store_s3 === true && body.export_type === 'binary') {
    throw new ValidationError([
      {
        loc: ['body', 'export_type'],
        msg: "export_type 'binary' cannot be combined with store_s3: true (the PDF goes to your bucket); omit one of them",
        type: 'value_error',
      },
    ]);
  }
}

/** The delivery fields every generation shares (PDF and image), with their defaults. */
export type DeliveryFields = Pick<
  CreateBody,
  'expiration' | 'filename' | 'store_s3' | 's3_filepath' | 's3_bucket' | 'version'
> & { export_type?: 'url' | 'binary' };

export function deliveryOptions(
  body: DeliveryFields,
): Omit<GenerationOptions, 'pdfVariant' | 'image' | 'tagged' | 'pdfUa'> {
  return {
    exportType: body.export_type ?? 'url',
    expirationSeconds: body.expiration ?? 86_400,
    filename: body.filename ?? 'document',
    storeS3: body.store_s3 ?? false,
    s3Filepath: body.store_s3 === true ? (body.s3_filepath ?? null) : null,
    s3Bucket: body.store_s3 === true ? (body.s3_bucket ?? null) : null,
    version: body.version ?? null,
    ignoredFields:
      body.store_s3 === true ? [] : (['s3_filepath', 's3_bucket'] as const).filter((field) => body[field] != null),
  };
}

export function generationOptions(
  body: Omit<CreateBody, 'export_type'> & { export_type?: 'url' | 'binary' },
): GenerationOptions {
  const finishing = {
    watermark: body.watermark ?? null,
    metadata: body.metadata ?? null,
    protect: body.protect ?? null,
    sign: body.sign ? signatureOptions(body.sign) : null,
  };
  return {
    ...deliveryOptions(body),
    pdfVariant: body.pdf_variant ?? null,
    tagged: body.tagged ?? null,
    pdfUa: body.pdf_ua ?? null,
    einvoice: body.einvoice ?? null,
    ...finishing,
    ...(body.form ? { form: { flatten: body.form.flatten ?? null, readOnly: body.form.read_only ?? null } } : {}),
  };
}

type UrlAnswer = Static<typeof UrlAnswer>;
type S3Answer = Static<typeof S3Answer>;

const checksField = (result: GenerationResult) => ({
  ...(result.einvoiceChecks ? { einvoice_checks: result.einvoiceChecks } : {}),
  ...(result.accessibilityChecks ? { accessibility_checks: result.accessibilityChecks } : {}),
});

/** Binary answers name the e-invoice's and the accessibility checks in headers, as they carry the warnings. */
function setChecksHeader(reply: FastifyReply, result: GenerationResult): FastifyReply {
  if (result.einvoiceChecks) reply.header('x-pressroom-einvoice-checks', result.einvoiceChecks);
  if (result.accessibilityChecks) reply.header('x-pressroom-accessibility-checks', result.accessibilityChecks);
  return reply;
}

/** The JSON answer for url and S3 deliveries; on a replay `expires_in` counts down from the first answer. */
export function jsonAnswer(result: GenerationResult, expirationSeconds: number): UrlAnswer | S3Answer | null {
  const d = result.delivery;
  if (d.kind === 'url') {
    const expiresIn = result.replayed ? Math.max(0, Math.ceil((d.expiresAt - Date.now()) / 1000)) : expirationSeconds;
    return {
      url: d.url,
      filename: d.filename,
      credits_remaining: result.creditsRemaining,
      expires_in: expiresIn,
      ...warningsField(result.warnings),
      ...checksField(result),
    };
  }
  if (d.kind === 's3')
    return {
      s3_bucket: d.bucket,
      s3_key: d.key,
      filename: d.filename,
      credits_remaining: result.creditsRemaining,
      ...warningsField(result.warnings),
      ...checksField(result),
    };
  return null;
}

/**
 * The charge of a request without an Idempotency-Key stands once its answer has been handed to the
 * connection; a client that went away first (during the render, or mid-answer) is not charged.
 */
export function settleWhenAnswered(reply: FastifyReply, result: GenerationResult): void {
  const response = reply.raw;
  if (response.destroyed) return void result.settle(false);
  response.once('close', () => void result.settle(response.writableFinished));
}

export function sendPdf(reply: FastifyReply, pdf: Buffer, filename: string, creditsRemaining: number): FastifyReply {
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
      operationId: 'createPdf',
      tags: ['PDF'],
      summary: 'Generate PDF from template',
      description:
        'Renders a saved template (or one of its versions) with `data` and answers when the PDF is ready: a signed link (`export_type: url`, JSON), ' +
        'the bytes (`export_type: binary`, application/pdf, with an X-Credits-Remaining header), or an upload to your bucket (`store_s3: true`, JSON). ' +
        '1 credit per delivered document; a failed one is refunded. Unknown body fields are ignored; a known field that cannot apply ' +
        '(s3_filepath without store_s3, binary with store_s3) is a 422. An `Idempotency-Key` header makes retries safe. What the document needed and did not get ' +
        '(required fields, undefined variables, resources) is listed in `warnings`; a strict template answers 422 for the data instead, charging nothing.',
      body: CreateBody,
      headers: IdempotencyHeaders,
      response: {
        200: mediaResponse('The link or S3 location (JSON), or the PDF itself for export_type binary', {
          'application/json': Type.Union([UrlAnswer, S3Answer]),
          'application/pdf': PdfBytes(),
          'application/xml': Type.Unsafe<Buffer>({
            type: 'string',
            format: 'binary',
            contentMediaType: 'application/xml',
            description: 'The XRechnung XML (einvoice.format xrechnung-cii or xrechnung-ubl with export_type binary)',
          }),
        }),
        ...errorResponses(400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const body = request.body as CreateBody;
      checkDeliveryOptions(body);
      const options = generationOptions(body);
      const result = await deps.documents.generate({
        accountId: request.caller.accountId,
        templateId: body.template_id,
        data: body.data,
        options,
        idempotency: idempotentRequest(request.headers['idempotency-key'] as string | undefined, 'pdf.create', body),
      });
      settleWhenAnswered(reply, result);
      const json = jsonAnswer(result, options.expirationSeconds);
      // A client that takes TemplateFox's properties only gets the warnings in the headers.
      if (json && wantsTemplateFoxPropertiesOnly(request))
        return setChecksHeader(setWarningHeaders(reply, result.warnings), result).send(
          templateFoxShape(request, json, ['warnings', 'einvoice_checks', 'accessibility_checks']),
        );
      if (json) return reply.send(json);
      const d = result.delivery as Extract<GenerationResult['delivery'], { kind: 'binary' }>;
      const headed = setChecksHeader(setWarningHeaders(reply, result.warnings), result);
      if (d.contentType === 'application/xml')
        return sendPdf(headed, d.pdf, d.filename, result.creditsRemaining).header('content-type', 'application/xml');
      return sendPdf(headed, d.pdf, d.filename, result.creditsRemaining);
    },
  });
}
