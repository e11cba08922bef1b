/** `POST /v1/image/create`: an image (PNG, JPEG, WebP) of an image template, in TemplateFox's shape. */
import { Type, type Static } from 'typebox';
import { jsonListHeader, setWarningHeaders } from '../../warning-headers.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { DocumentService, GenerationOptions, GenerationResult } from '../../../documents/documents.js';
import { idempotentRequest } from '../../../idempotency/idempotency.js';
import { MAX_IMAGE_WIDTH, MIN_IMAGE_WIDTH } from '../../../rendering/image-renderer.js';
import { ValidationError } from '../../../shared/errors.js';
import { MAX_MODIFICATIONS } from '../../../templates/layers/layer-modifications.js';
import { MAX_TEMPLATE_LAYERS } from '../../../templates/layers/template-layers.js';
import { attachmentDisposition } from '../../../storage/content-disposition.js';
import { EXAMPLE_TEMPLATE_ID } from '../../examples.js';
import {
  JsonObject,
  Nullable,
  StringEnum,
  TEMPLATE_ID,
  errorResponses,
  imageBytesByType,
  mediaResponse,
} from '../../schemas.js';
import {
  IdempotencyHeaders,
  checkDeliveryOptions,
  deliveryOptions,
  generationFields,
  settleWhenAnswered,
} from './pdf.js';

const Modification = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        "Name of the layer to modify: an element's `data-layer` (or `data-layer-name`), falling back to its `id`. `background` is the page when no element has that name.",
      examples: ['headline'],
    }),
    text: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 10_000,
          description:
            "Replace the element's text content. Rendered as literal text (HTML and `{{ }}` are not interpreted).",
          examples: ['Summer sale'],
        }),
      ),
    ),
    image_url: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 2000,
          pattern: '^(https?://|data:image/)',
          description:
            'Set the image: `src` of an `<img>`, `background-image` of any other element. An https URL is downloaded through the outbound guard (public addresses only); a `data:image/…;base64,` URL is used as it is. One that cannot be loaded is a warning.',
          examples: ['https://images.example.com/logo.png'],
        }),
      ),
    ),
    color: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 100,
          description:
            "CSS colour of the element's text (`color`): #rgb, #rrggbb, #rrggbbaa, a colour name, or rgb()/hsl()/… with numbers",
          examples: ['#1a73e8'],
        }),
      ),
    ),
    background: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 100,
          description: "CSS colour of the element's background (`background-color`)",
          examples: ['white'],
        }),
      ),
    ),
    hidden: Type.Optional(
      Nullable(Type.Boolean({ description: 'Hide (`true`) or show (`false`) the element', examples: [false] })),
    ),
  },
  { description: 'A single element modification, addressed by layer name' },
);

const CreateImageBody = Type.Object(
  {
    template_id: TEMPLATE_ID,
    // Inline, not a $ref: request bodies are checked by our own Ajv (validation.ts), which knows no shared schemas.
    modifications: Type.Optional(
      Nullable(
        Type.Array(Modification, {
          maxItems: MAX_MODIFICATIONS,
          description:
            'Modify elements by layer name (GET /v1/templates/{id}/layers lists them). Unknown layer names are skipped and listed in `warnings`; a name several elements share applies to all of them. ' +
            `A template whose output has more than ${MAX_TEMPLATE_LAYERS} layer elements cannot be modified: 422 DOCUMENT_TOO_LARGE (bound \`layers\`), refunded.`,
        }),
      ),
    ),
    data: Type.Optional(
      Nullable(
        JsonObject({
          description:
            'Optional key-value data merged into `{{ }}` template variables. For most image templates, prefer `modifications` instead.',
          examples: [{ name: 'Ada' }],
        }),
      ),
    ),
    format: Type.Optional(
      Nullable(
        StringEnum(['png', 'jpeg', 'webp'] as const, {
          default: 'png',
          description: 'Output image format: `png` (default), `jpeg` or `webp`.',
        }),
      ),
    ),
    width: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: MIN_IMAGE_WIDTH,
          maximum: MAX_IMAGE_WIDTH,
          description:
            "Output width in pixels (height follows the template's aspect ratio). Defaults to the template's canvas width.",
          examples: [1200],
        }),
      ),
    ),
    quality: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 85,
        description: 'Compression quality for `jpeg`/`webp` (1-100). Ignored for `png`.',
      }),
    ),
    page: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          maximum: 100_000,
          description:
            "For a PDF template: which page of the printed document becomes the image, 1 when left out (png or jpeg; the width defaults to the paper's at 96 dpi). Past the last page → 422, nothing charged. Not for image templates.",
          examples: [1],
        }),
      ),
    ),
    export_type: Type.Optional(
      StringEnum(['url', 'binary'] as const, {
        default: 'url',
        description: 'Export format: `url` stores the image and returns a signed URL, `binary` returns raw image bytes',
      }),
    ),
    expiration: generationFields.expiration,
    filename: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 100,
          pattern: '^[A-Za-z0-9_.-]+$',
          description:
            "Custom filename without extension (the format's is added: .png, .jpg, .webp). Defaults to 'document'.",
          examples: ['summer-sale'],
        }),
      ),
    ),
    store_s3: generationFields.store_s3,
    s3_filepath: generationFields.s3_filepath,
    s3_bucket: generationFields.s3_bucket,
    version: generationFields.version,
  },
  {
    examples: [
      {
        template_id: EXAMPLE_TEMPLATE_ID,
        modifications: [{ name: 'headline', text: 'Summer sale', color: '#d93025' }],
        format: 'png',
        width: 1200,
      },
    ],
  },
);
type CreateImageBody = Static<typeof CreateImageBody>;

/** Fields of the other create endpoints an image cannot honour: refused, never silently dropped. */
const NOT_FOR_IMAGES: Record<string, string> = {
  pdf_variant: 'applies to PDFs; an image has no PDF/A variant',
  tagged: 'applies to PDFs; an image has no structure tree',
  pdf_ua: 'applies to PDFs; an image has no structure tree (give it an alt text where you place it)',
  webhook_url: 'applies to POST /v1/pdf/create-async; image/create answers synchronously',
  webhook_secret: 'applies to POST /v1/pdf/create-async; image/create answers synchronously',
};

function refuseForeignFields(body: Record<string, unknown>): void {
  const issues = Object.entries(NOT_FOR_IMAGES)
    .filter(([field]) => body[field] !== undefined && body[field] !== null)
    .map(([field, why]) => ({ loc: ['body', field], msg: `${field} ${why}; leave it out`, type: 'value_error' }));
  if (issues.length > 0) throw new ValidationError(issues);
}

function imageOptions(body: CreateImageBody): GenerationOptions {
  return {
    ...deliveryOptions(body),
    image: {
      format: body.format ?? 'png',
      width: body.width ?? null,
      quality: body.quality ?? 85,
      modifications: body.modifications ?? [],
      page: body.page ?? null,
    },
  };
}

const Warnings = Type.Optional(
  Type.Array(Type.String(), { description: 'Non-fatal issues: unknown layer names, images that could not be loaded' }),
);
const UrlAnswer = Type.Object(
  {
    url: Type.String({ description: 'Signed URL to download the image (expires after `expires_in` seconds)' }),
    filename: Type.String({ description: 'Filename of the generated image', examples: ['document.png'] }),
    credits_remaining: Type.Integer({ description: 'Remaining credits after this request' }),
    expires_in: Type.Integer({ description: 'Seconds until the signed URL expires' }),
    warnings: Warnings,
  },
  { description: 'export_type url' },
);
const S3Answer = Type.Object(
  {
    s3_bucket: Type.String({ description: 'Bucket the image was uploaded to' }),
    s3_key: Type.String({ description: 'Its key in the bucket' }),
    filename: Type.String({ description: 'File name, ending in .png, .jpg or .webp' }),
    credits_remaining: Type.Integer({ description: 'Credits left after this one' }),
    warnings: Warnings,
  },
  { description: 'store_s3 true' },
);

/** Largest `x-warnings` header: clients cap response headers (undici at 16 KiB for all of them). */
const WARNINGS_HEADER_MAX_CHARS = 4096;

/** TemplateFox's image API answers warnings as strings; an older stored replay may hold strings already. */
function warningMessages(warnings: GenerationResult['warnings']): string[] {
  // A resource's address goes into the sentence: strings have no field of their own for it.
  return (warnings ?? []).map((w) => (typeof w === 'string' ? w : w.url ? `${w.message} (${w.url})` : w.message));
}

/** The warnings of a binary answer as a JSON array in ASCII (header-safe), shortened when long. */
function warningsHeader(warnings: string[]): string {
  return jsonListHeader(warnings, WARNINGS_HEADER_MAX_CHARS, (left) => `…and ${left} more`);
}

function sendImage(reply: FastifyReply, result: GenerationResult): FastifyReply {
  const d = result.delivery as Extract<GenerationResult['delivery'], { kind: 'binary' }>;
  reply
    .code(200)
    .header('content-type', d.contentType ?? 'application/octet-stream')
    .header('content-disposition', attachmentDisposition(d.filename))
    .header('x-credits-remaining', String(result.creditsRemaining));
  if (result.warnings && result.warnings.length > 0)
    reply.header('x-warnings', warningsHeader(warningMessages(result.warnings)));
  if (result.warnings?.every((w) => typeof w !== 'string')) setWarningHeaders(reply, result.warnings);
  return reply.send(d.pdf);
}

function jsonAnswer(
  result: GenerationResult,
  expirationSeconds: number,
): Static<typeof UrlAnswer> | Static<typeof S3Answer> | null {
  const d = result.delivery;
  const warnings = result.warnings && result.warnings.length > 0 ? { warnings: warningMessages(result.warnings) } : {};
  if (d.kind === 'url') {
    // A replay counts down from the first answer (the link's expiry is rounded up to whole seconds, hence the min).
    const expiresIn = result.replayed
      ? Math.min(expirationSeconds, Math.max(0, Math.ceil((d.expiresAt - Date.now()) / 1000)))
      : expirationSeconds;
    return {
      url: d.url,
      filename: d.filename,
      credits_remaining: result.creditsRemaining,
      expires_in: expiresIn,
      ...warnings,
    };
  }
  if (d.kind === 's3')
    return {
      s3_bucket: d.bucket,
      s3_key: d.key,
      filename: d.filename,
      credits_remaining: result.creditsRemaining,
      ...warnings,
    };
  return null;
}

/** Registers `POST /v1/image/create`. */
export function imageRoutes(app: FastifyInstance, deps: { documents: DocumentService }): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post('/v1/image/create', {
    config: { auth: 'api_key' },
    schema: {
      tags: ['Image'],
      operationId: 'createImage',
      summary: 'Generate image from template',
      description:
        'Renders an image template (kind `image`) to PNG, JPEG or WebP: the template is evaluated in the same sandbox as PDFs, ' +
        "`modifications` set layers' text, image, colours or visibility, and the canvas is captured at `width` pixels. " +
        '1 credit per delivered image, none for a failure; `Idempotency-Key` is honoured. A PDF template answers 400 INVALID_REQUEST. ' +
        'Unknown body fields are ignored; a known field that cannot apply (pdf_variant, webhooks, s3_filepath without store_s3, binary with store_s3) is a 422.',
      body: CreateImageBody,
      headers: IdempotencyHeaders,
      response: {
        200: mediaResponse(
          'The link or S3 location (JSON), or the image itself for export_type binary (its warnings in the X-Warnings header, a JSON array)',
          {
            'application/json': Type.Union([UrlAnswer, S3Answer]),
            ...imageBytesByType(),
          },
        ),
        ...errorResponses(400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const body = request.body as CreateImageBody;
      refuseForeignFields(body as Record<string, unknown>);
      checkDeliveryOptions(body);
      const options = imageOptions(body);
      const result = await deps.documents.generate({
        accountId: request.caller.accountId,
        templateId: body.template_id,
        data: body.data ?? {},
        options,
        idempotency: idempotentRequest(request.headers['idempotency-key'] as string | undefined, 'image.create', body),
      });
      settleWhenAnswered(reply, result);
      const json = jsonAnswer(result, options.expirationSeconds);
      return json ? reply.send(json) : sendImage(reply, result);
    },
  });
}
