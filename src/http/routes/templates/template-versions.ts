/**
 * Template versions: list, create (snapshot the current template), read one with its snapshot,
 * retag/describe, delete. No credits. Reading one version's content is Pressroom's addition (the
 * studio compares versions with it); the other four are TemplateFox's.
 */
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  TemplateVersion,
  TemplateVersionService,
  TemplateVersionWithContent,
} from '../../../templates/template-versions.js';
import { VERSION_TAG_PATTERN, VERSION_TAG_RULE_TEXT } from '../../../templates/version-tag.js';
import {
  FieldSchema,
  JsonObject,
  Nullable,
  PageSetupSchema,
  SuccessBody,
  TEMPLATE_ID,
  errorResponses,
  isoTime,
} from '../../schemas.js';

const TAG = Type.String({
  minLength: 2,
  maxLength: 50,
  pattern: VERSION_TAG_PATTERN,
  description: `${VERSION_TAG_RULE_TEXT}; unique per template`,
});
const DESCRIPTION = Type.String({ maxLength: 500, description: 'Free text, at most 500 characters' });

const VersionView = Type.Object(
  {
    version_number: Type.Integer({ description: '1, 2, 3… per template; never reused after a delete' }),
    tag: Type.String({
      description: "The version's tag, unique per template; use it as `version` on POST /v1/pdf/create",
    }),
    description: Nullable(Type.String({ description: 'Free text' })),
    created_at: Type.String({ format: 'date-time', description: 'When the version was saved (ISO 8601)' }),
  },
  { $id: 'TemplateVersion', description: 'A saved, immutable version of a template' },
);

const VersionContentView = Type.Object({
  version_number: Type.Integer({ description: 'The version number' }),
  tag: Type.String({ description: "The version's tag" }),
  description: Nullable(Type.String(), { description: "The version's description, or null" }),
  created_at: Type.String({ format: 'date-time', description: 'When the snapshot was taken' }),
  name: Type.String({ description: "The template's name when the snapshot was taken" }),
  html: Type.String({ description: "The snapshot's HTML" }),
  css: Nullable(Type.String(), { description: "The snapshot's CSS" }),
  fields: Type.Array(FieldSchema, { description: "The snapshot's field definitions" }),
  fields_inferred: Type.Boolean({ description: 'true when those fields were inferred from the template' }),
  sample_data: Nullable(JsonObject(), { description: "The snapshot's sample data" }),
  page: Nullable(PageSetupSchema, { description: "The snapshot's page setup, header and footer included" }),
  strict: Type.Boolean({
    description:
      "The snapshot's strict mode: missing required fields and undefined variables are errors (422), not warnings",
  }),
});

const CreateVersionBody = Type.Object(
  { tag: TAG, description: Type.Optional(Nullable(DESCRIPTION)) },
  { examples: [{ tag: 'prod', description: 'Approved by finance' }] },
);
const UpdateVersionBody = Type.Object(
  { tag: Type.Optional(TAG), description: Type.Optional(Nullable(DESCRIPTION)) },
  { examples: [{ tag: 'prod-2026-01', description: 'Superseded' }] },
);

const Params = Type.Object({ template_id: TEMPLATE_ID });
const VersionParams = Type.Object({
  template_id: TEMPLATE_ID,
  version_number: Type.Integer({ minimum: 1, description: 'Version number' }),
});

function view(v: TemplateVersion): Static<typeof VersionView> {
  return { version_number: v.versionNumber, tag: v.tag, description: v.description, created_at: isoTime(v.createdAt) };
}

function contentView(v: TemplateVersionWithContent): Static<typeof VersionContentView> {
  const c = v.content;
  return {
    ...view(v),
    name: c.name,
    html: c.html,
    css: c.css,
    fields: c.fields,
    fields_inferred: c.fieldsInferred,
    sample_data: c.sampleData,
    page: c.page,
    strict: c.strict,
  };
}

/** Registers the version routes under /v1/templates/{template_id}/versions. */
export function templateVersionRoutes(app: FastifyInstance, versions: TemplateVersionService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addSchema(VersionView);
  const versionRef = Type.Unsafe<Static<typeof VersionView>>({ $ref: 'TemplateVersion#' });

  r.get('/v1/templates/:template_id/versions', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'listTemplateVersions',
      tags: ['Templates'],
      summary: 'List template versions',
      description:
        'The saved versions, ascending by version number; the draft (the template itself) is not listed. No credits.',
      params: Params,
      response: {
        200: Type.Object({ versions: Type.Array(versionRef, { description: 'The versions, oldest first' }) }),
        ...errorResponses(401, 403, 404, 422, 429),
      },
    },
    handler: async (request) => ({
      versions: (await versions.list(request.caller.accountId, request.params.template_id)).map(view),
    }),
  });

  r.post('/v1/templates/:template_id/versions', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'createTemplateVersion',
      tags: ['Templates'],
      summary: 'Create a template version',
      description:
        'An immutable snapshot of html, css, page setup (header, footer), fields and sample data. A tag another version has → 409 VERSION_TAG_EXISTS. No credits. Answers 200, as TemplateFox declares (its generated clients decode no other success code).',
      params: Params,
      body: CreateVersionBody,
      response: { 200: versionRef, ...errorResponses(401, 403, 404, 409, 422, 429) },
    },
    handler: async (request) =>
      view(
        await versions.create(
          request.caller.accountId,
          request.params.template_id,
          request.body as Static<typeof CreateVersionBody>,
        ),
      ),
  });

  r.get('/v1/templates/:template_id/versions/:version_number', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'getTemplateVersion',
      tags: ['Templates'],
      summary: 'Get a template version with its snapshot',
      description:
        "The version and the content it renders: html, css, page setup (header and footer), fields and sample data. Pressroom's addition to the TemplateFox API (the studio compares versions with it). No credits.",
      params: VersionParams,
      response: { 200: VersionContentView, ...errorResponses(401, 403, 404, 422, 429) },
    },
    handler: async (request) =>
      contentView(
        await versions.get(request.caller.accountId, request.params.template_id, request.params.version_number),
      ),
  });

  r.patch('/v1/templates/:template_id/versions/:version_number', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'updateTemplateVersion',
      tags: ['Templates'],
      summary: "Update a version's tag or description",
      description:
        'The content never changes. To move a tag, first give the version holding it another tag (or delete it). description: null clears it.',
      params: VersionParams,
      body: UpdateVersionBody,
      response: { 200: versionRef, ...errorResponses(401, 403, 404, 409, 422, 429) },
    },
    handler: async (request) => {
      const { template_id, version_number } = request.params;
      return view(
        await versions.update(
          request.caller.accountId,
          template_id,
          version_number,
          request.body as Static<typeof UpdateVersionBody>,
        ),
      );
    },
  });

  r.delete('/v1/templates/:template_id/versions/:version_number', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'deleteTemplateVersion',
      tags: ['Templates'],
      summary: 'Delete a template version',
      description:
        'Its number is never given out again. A queued job for it fails with VERSION_NOT_FOUND and is refunded.',
      params: VersionParams,
      response: { 200: SuccessBody, ...errorResponses(401, 403, 404, 422, 429) },
    },
    handler: async (request) => {
      await versions.remove(request.caller.accountId, request.params.template_id, request.params.version_number);
      return { success: true };
    },
  });
}
