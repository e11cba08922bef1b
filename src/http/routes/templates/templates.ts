/** Templates: the spec's read-only list and fields endpoints, plus management (create, read, update, delete). */
import { Type, type Static } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Template } from '../../../templates/templates.js';
import type { TemplateService } from '../../../templates/templates.js';
import { TEMPLATE_EXAMPLE } from '../../examples.js';
import {
  FieldSchema,
  JsonObject,
  Nullable,
  PageSetupSchema,
  StringEnum,
  SuccessBody,
  TEMPLATE_ID,
  errorResponses,
  isoTime,
} from '../../schemas.js';
import { CANVAS_MAX_PX, CANVAS_MIN_PX, TEMPLATE_KINDS } from '../../../templates/template-kind.js';
import { FORM_PDF_MAX_BYTES, UPLOAD_LOC } from '../../../pdf-forms/form-files.js';
import { ValidationError } from '../../../shared/errors.js';
import { checkBody, validatorCompiler } from '../../validation.js';

const KIND = StringEnum(TEMPLATE_KINDS, {
  description:
    'Template product kind: `pdf` (paper, page setup; POST /v1/pdf/create), `image` (a canvas; POST /v1/image/create) or `pdf_form` ' +
    '(a fillable PDF form given in `pdf_base64`, filled from `data` by POST /v1/pdf/create; docs/pdf-forms.md)',
  examples: ['pdf'],
});

const FormView = Type.Object(
  {
    pages: Type.Integer({ description: "The form PDF's pages" }),
    bytes: Type.Integer({ description: 'Its size as stored (written without object streams)' }),
    sha256: Type.String({
      description: 'SHA-256 of the stored PDF (hex): a new PDF is a new draft, and versions keep theirs',
    }),
    fields: Type.Integer({ description: 'Fields filled from data (GET /v1/templates/{id}/fields lists them)' }),
  },
  { description: 'pdf_form templates: the stored form; null for other kinds' },
);
const CanvasSide = (what: string, example: number) =>
  Type.Integer({
    minimum: CANVAS_MIN_PX,
    maximum: CANVAS_MAX_PX,
    description: `Canvas ${what} in CSS pixels (${CANVAS_MIN_PX}–${CANVAS_MAX_PX})`,
    examples: [example],
  });
const CanvasSchema = Type.Object(
  { width: CanvasSide('width', 1200), height: CanvasSide('height', 630) },
  {
    description:
      'Image templates only: the size the template is laid out at; image/create `width` scales it. Default 1080 × 1080.',
  },
);

const STRICT_DESCRIPTION =
  'Strict mode (Jinja2\'s StrictUndefined; docs/templates.md "Strict mode and warnings"): a required field the data lacks, an undefined variable ' +
  'printed by the template, or a text where a number or date belongs fails the generation with 422 naming it, and nothing is charged. ' +
  'Off (the default), the document is generated and each of these comes back as a warning (MISSING_REQUIRED_FIELD, UNDEFINED_VARIABLE, INVALID_NUMBER, INVALID_DATE).';

const createdAt = () => Type.String({ format: 'date-time', description: 'When the template was created (ISO 8601)' });
const updatedAt = () => Type.String({ format: 'date-time', description: 'Last change (ISO 8601)' });

const TemplateListItem = Type.Object({
  id: Type.String({ description: 'Template short ID, exactly 12 characters' }),
  name: Type.String({ description: 'Template name' }),
  kind: KIND,
  created_at: createdAt(),
  updated_at: updatedAt(),
});

const templateFields = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Template name' }),
  html: Type.String({
    minLength: 1,
    maxLength: 2_000_000,
    description: 'HTML with Jinja2-style variables ({{ name }}, {% for %}, filters)',
  }),
  css: Type.Optional(Nullable(Type.String({ maxLength: 1_000_000, description: 'CSS applied to the HTML' }))),
  fields: Type.Optional(
    Nullable(
      Type.Array(FieldSchema, {
        maxItems: 500,
        description: 'Field definitions; inferred from the template when omitted',
      }),
    ),
  ),
  sample_data: Type.Optional(Nullable(JsonObject({ description: 'Example data: the studio previews with it' }))),
  page: Type.Optional(Nullable(PageSetupSchema)),
  kind: Type.Optional(KIND),
  canvas: Type.Optional(Nullable(CanvasSchema)),
  // No schema `default`: the validator fills defaults in, and an update without `strict` keeps the stored value.
  strict: Type.Optional(Type.Boolean({ description: `${STRICT_DESCRIPTION} Default false.` })),
  pdf_base64: Type.Optional(
    Nullable(
      Type.String({
        maxLength: Math.ceil((FORM_PDF_MAX_BYTES * 4) / 3) + 64,
        description:
          `kind pdf_form only: the fillable PDF form (AcroForm), base64, at most ${FORM_PDF_MAX_BYTES} bytes. Checked before anything is stored: ` +
          'encrypted, XFA-only and signature-only forms are refused (422 at body.pdf_base64). On an update, a new PDF is a new draft ' +
          '(published versions keep theirs). A pdf_form template has no html or css (422 when given)',
      }),
    ),
  ),
};
const TemplateBody = Type.Object(
  {
    ...templateFields,
    html: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2_000_000,
        description:
          'HTML with Jinja2-style variables ({{ name }}, {% for %}, filters); required for pdf and image templates, none for pdf_form',
      }),
    ),
  },
  { examples: [TEMPLATE_EXAMPLE] },
);
type TemplateBody = Static<typeof TemplateBody>;

const TemplateUpdateBody = Type.Partial(Type.Object(templateFields), {
  examples: [{ name: 'Invoice (2026)', css: 'body { font-family: serif; }' }],
});

const TemplateView = Type.Object(
  {
    id: Type.String({ description: 'Template short ID, exactly 12 characters' }),
    name: Type.String({ description: 'Template name' }),
    html: Type.String({ description: 'HTML with Jinja2-style variables' }),
    css: Nullable(Type.String({ description: 'CSS applied to the HTML' })),
    fields: Type.Array(FieldSchema, { description: 'Input fields (given, or inferred from the template)' }),
    fields_inferred: Type.Boolean({ description: 'true when the fields were inferred from the template' }),
    sample_data: Nullable(JsonObject({ description: 'Example data' })),
    page: Nullable(PageSetupSchema),
    kind: KIND,
    canvas: Nullable(CanvasSchema),
    strict: Type.Boolean({ description: STRICT_DESCRIPTION }),
    form: Nullable(FormView),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
  { description: 'A template with everything it holds (a pdf_form template: html "", css null)' },
);

const ListQuery = Type.Object({
  kind: Type.Optional(
    StringEnum(TEMPLATE_KINDS, { description: 'Filter by product kind: `pdf`, `image` or `pdf_form`' }),
  ),
});

const Params = Type.Object({ template_id: TEMPLATE_ID });

function view(t: Template): Static<typeof TemplateView> {
  return {
    id: t.id,
    name: t.name,
    html: t.html,
    css: t.css,
    fields: t.fields,
    fields_inferred: t.fieldsInferred,
    sample_data: t.sampleData,
    page: t.page,
    kind: t.kind,
    canvas: t.canvas,
    strict: t.strict,
    form: t.form
      ? { pages: t.form.pages, bytes: t.form.bytes, sha256: t.form.sha256, fields: t.form.fields.length }
      : null,
    created_at: isoTime(t.createdAt),
    updated_at: isoTime(t.updatedAt),
  };
}

/** The parts a multipart create takes: a form template's name and kind, and its PDF as a file part. */
const UPLOAD_PARTS = new Set(['name', 'kind', 'pdf']);
const MultipartFields = Type.Object({ name: templateFields.name, kind: KIND });

/**
 * A multipart create (`name`, `kind=pdf_form`, one file part `pdf`): the input of a form template, the
 * PDF's bytes checked by form-files.ts as pdf_base64's are (at ["body","pdf"]). The body is within the
 * route's 4 MiB limit; a file over FORM_PDF_MAX_BYTES is refused there.
 */
async function multipartTemplate(request: FastifyRequest, body: Buffer): Promise<TemplateBody & { pdf: Buffer }> {
  const refuse: (loc: string[], msg: string, type?: string) => never = (loc, msg, type = 'value_error') => {
    throw new ValidationError([{ loc, msg, type }]);
  };
  let form: FormData | undefined;
  try {
    form = await new Response(new Uint8Array(body), {
      headers: { 'content-type': String(request.headers['content-type']) },
    }).formData();
  } catch {
    refuse(['body'], 'The multipart/form-data body could not be read');
  }
  const parts = [...form!.keys()];
  for (const key of new Set(parts)) {
    if (!UPLOAD_PARTS.has(key))
      refuse(
        ['body', key],
        'A multipart create takes name, kind (pdf_form) and a file part pdf; set sample_data and fields with PUT /v1/templates/{id}, or send JSON',
      );
    if (parts.filter((p) => p === key).length > 1) refuse(['body', key], `Give ${key} once`);
  }
  const fields = { name: form!.get('name') ?? undefined, kind: form!.get('kind') ?? undefined };
  for (const [key, value] of Object.entries(fields))
    if (value !== undefined && typeof value !== 'string') refuse(['body', key], `${key} is a text field, not a file`);
  checkBody(MultipartFields, fields);
  if (fields.kind !== 'pdf_form')
    refuse(['body', 'kind'], 'A multipart upload makes a pdf_form template; send other kinds as JSON');
  const file = form!.get('pdf');
  if (file === null) refuse(UPLOAD_LOC, 'A file part named "pdf" with the fillable PDF is required', 'missing');
  if (typeof file === 'string') refuse(UPLOAD_LOC, 'pdf is a file part (the fillable PDF), not a text field');
  if ((file as File).size > FORM_PDF_MAX_BYTES)
    refuse(UPLOAD_LOC, `A form PDF may have at most ${FORM_PDF_MAX_BYTES} bytes; send a smaller file`, 'pdf_too_large');
  return {
    name: fields.name as string,
    kind: 'pdf_form',
    pdf: Buffer.from(await (file as File).arrayBuffer()),
  };
}

export function templateRoutes(app: FastifyInstance, templates: TemplateService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get('/v1/templates', {
    config: { auth: 'read' },
    schema: {
      operationId: 'listTemplates',
      tags: ['Templates'],
      summary: 'List templates',
      description:
        'All templates of the authenticated account, newest first; `kind` lists only PDF or only image templates. No credits. Accepts an access token too.',
      querystring: ListQuery,
      response: {
        200: Type.Object({ templates: Type.Array(TemplateListItem, { description: 'The templates' }) }),
        ...errorResponses(401, 422, 429),
      },
    },
    handler: async (request) => {
      const list = await templates.list(request.caller.accountId, { kind: request.query.kind });
      return {
        templates: list.map((t) => ({
          id: t.id,
          name: t.name,
          kind: t.kind,
          created_at: isoTime(t.createdAt),
          updated_at: isoTime(t.updatedAt),
        })),
      };
    },
  });

  r.get('/v1/templates/:template_id/fields', {
    config: { auth: 'read' },
    schema: {
      operationId: 'getTemplateFields',
      tags: ['Templates'],
      summary: 'Get template fields',
      description:
        'The input fields no-code tools build forms from; for an array field, `spec` lists the item structure. No credits. Accepts an access token too.',
      params: Params,
      response: { 200: Type.Array(FieldSchema), ...errorResponses(401, 403, 404, 422, 429) },
    },
    handler: async (request) => (await templates.get(request.caller.accountId, request.params.template_id)).fields,
  });

  r.post('/v1/templates/fields', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'inferTemplateFields',
      tags: ['Templates'],
      summary: 'Infer the fields of template text (not saved)',
      description:
        "The fields a template with this text would get (as `fields_inferred` templates do), without saving anything: the studio's form follows the HTML as it is typed. 422 naming the part and line when the text does not parse, or `too_many_fields` past 500 fields. No credits (Pressroom; not in TemplateFox).",
      body: Type.Object(
        {
          html: templateFields.html,
          css: templateFields.css,
          page: Type.Optional(
            Nullable(
              Type.Object(
                {
                  header_html: Type.Optional(Type.String({ maxLength: 1_000_000, description: 'Header template' })),
                  footer_html: Type.Optional(Type.String({ maxLength: 1_000_000, description: 'Footer template' })),
                },
                { description: 'The header and footer, whose variables are fields too' },
              ),
            ),
          ),
          sample_data: Type.Optional(
            Nullable(
              JsonObject({
                description: "Example data: its values become the fields' help text, as on a saved template",
              }),
            ),
          ),
        },
        { examples: [{ html: TEMPLATE_EXAMPLE.html }] },
      ),
      response: {
        200: Type.Object({
          fields: Type.Array(FieldSchema, { description: 'The inferred fields, in the order the text uses them' }),
        }),
        ...errorResponses(401, 413, 422, 429),
      },
    },
    handler: async (request) => ({
      fields: await templates.inferFields(request.caller.accountId, {
        html: request.body.html,
        css: request.body.css,
        page: request.body.page,
        sample_data: request.body.sample_data,
      }),
    }),
  });

  // A multipart create (a form's PDF as a file part) in its own scope: the multipart parser is this route's only.
  app.register(async (scope) => {
    scope.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );
    scope.withTypeProvider<TypeBoxTypeProvider>().post('/v1/templates', {
      config: { auth: 'api_key' },
      schema: {
        operationId: 'createTemplate',
        tags: ['Templates'],
        summary: 'Create a template',
        description:
          'A template that does not parse is refused with 422 naming the part and line. Without `fields`, they are inferred from the template. ' +
          'With `kind: pdf_form` and `pdf_base64`, a fillable PDF form becomes the template, its fields read from the form (docs/pdf-forms.md); ' +
          `or send \`multipart/form-data\` with \`name\`, \`kind=pdf_form\` and the PDF as a file part \`pdf\` (at most ${FORM_PDF_MAX_BYTES} bytes). No credits.`,
        body: TemplateBody,
        response: { 201: TemplateView, ...errorResponses(401, 413, 422, 429) },
      },
      // A multipart body is read and checked by multipartTemplate; JSON as on every route.
      validatorCompiler: (route) => {
        const json = validatorCompiler(route);
        return (data) => (Buffer.isBuffer(data) ? { value: data } : json(data));
      },
      handler: async (request, reply) => {
        const input = Buffer.isBuffer(request.body)
          ? await multipartTemplate(request, request.body)
          : (request.body as TemplateBody);
        const template = await templates.create(request.caller.accountId, input);
        return reply.code(201).send(view(template));
      },
    });
  });

  r.get('/v1/templates/:template_id', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'getTemplate',
      tags: ['Templates'],
      summary: 'Get a template',
      description: 'The template with its html, css, fields, sample data and page setup.',
      params: Params,
      response: { 200: TemplateView, ...errorResponses(401, 403, 404, 422, 429) },
    },
    handler: async (request) => view(await templates.get(request.caller.accountId, request.params.template_id)),
  });

  r.put('/v1/templates/:template_id', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'updateTemplate',
      tags: ['Templates'],
      summary: 'Update a template',
      description:
        'Any subset of the create fields; omitted ones keep their values. Inferred fields follow the new template text.',
      params: Params,
      body: TemplateUpdateBody,
      response: { 200: TemplateView, ...errorResponses(401, 403, 404, 413, 422, 429) },
    },
    handler: async (request) =>
      view(
        await templates.update(
          request.caller.accountId,
          request.params.template_id,
          request.body as Partial<TemplateBody>,
        ),
      ),
  });

  r.delete('/v1/templates/:template_id', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'deleteTemplate',
      tags: ['Templates'],
      summary: 'Delete a template',
      description: 'Deletes the template and its versions for good.',
      params: Params,
      response: { 200: SuccessBody, ...errorResponses(401, 403, 404, 422, 429) },
    },
    handler: async (request) => {
      await templates.remove(request.caller.accountId, request.params.template_id);
      return { success: true };
    },
  });
}
