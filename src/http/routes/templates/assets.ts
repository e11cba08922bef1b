/**
 * The asset library (docs/assets.md): `POST /v1/assets` (multipart/form-data with a `file` part and
 * an optional `name`, or JSON `{name, content_base64, content_type?}`), `GET /v1/assets`,
 * `GET /v1/assets/{name}` (the bytes; with `Accept: application/json`, its revisions and who uses
 * them; `?revision=N`, that revision's bytes), `DELETE /v1/assets/{name}`. Names may contain `/`, so
 * the name routes are wildcards. Free of charge. API keys only: an access token is for template
 * pickers and input forms (docs/assets.md), and an account's files — licensed fonts among them — are neither.
 */
import { Type } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  ASSET_MAX_BYTES,
  ASSET_NAME_RULE,
  assetNameProblem,
  type AssetService,
  type AssetUpload,
} from '../../../assets/assets.js';
import { ASSET_CONTENT_TYPES } from '../../../assets/asset-types.js';
import { ValidationError } from '../../../shared/errors.js';
import { SuccessBody, errorResponses, mediaResponse } from '../../schemas.js';

const SHA_EXAMPLE = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';

const assetFields = {
  name: Type.String({
    description: `Asset name (${ASSET_NAME_RULE}); use it in templates as {{ asset('name') }}`,
    examples: ['logo.png'],
  }),
  content_type: Type.String({
    description: `Media type of the current revision, read from the bytes: ${ASSET_CONTENT_TYPES.join(', ')}`,
    examples: ['image/png'],
  }),
  size: Type.Integer({ description: 'Bytes of the current revision', examples: [12840] }),
  sha256: Type.String({ description: "SHA-256 of the current revision's bytes, hex", examples: [SHA_EXAMPLE] }),
  created_at: Type.String({ format: 'date-time', description: 'First upload under this name' }),
  updated_at: Type.String({ format: 'date-time', description: 'Last upload under this name' }),
  revision: Type.Integer({
    minimum: 1,
    description: 'The current revision (1, 2, 3… per name): what drafts print. Each upload under the name adds one',
    examples: [2],
  }),
};

const VersionRef = {
  version_number: Type.Integer({ description: "The version's number" }),
  tag: Type.String({ description: "The version's tag" }),
};

const AssetUser = Type.Object(
  {
    template_id: Type.String({ description: 'Template id' }),
    template_name: Type.String({ description: 'Template name' }),
    draft: Type.Boolean({ description: 'The draft names the asset: it prints the current revision' }),
    versions: Type.Array(
      Type.Object({ ...VersionRef, revision: Type.Integer({ description: 'The revision this version prints' }) }),
      { description: 'Published versions that print a revision of the asset, and which' },
    ),
    computed: Type.Boolean({
      description:
        'The template computes asset names (asset(data.logo)), so it may use this one: it is listed for every asset',
    }),
  },
  { description: 'A template using the asset through its draft, its versions, or both' },
);

const UsedBy = Type.Array(AssetUser, {
  description:
    "The templates whose draft or published versions use this name (asset('name') in their HTML, CSS, header or footer), by template name",
});

const ListedAsset = Type.Object(
  { ...assetFields, used_by: UsedBy },
  { description: 'An asset name of this account, with its current revision' },
);

const UploadedAsset = Type.Object(
  {
    ...assetFields,
    replaced: Type.Boolean({
      description:
        'The name had a file already: this upload is its new current revision (the earlier one stays while published versions print it)',
    }),
    used_by: UsedBy,
  },
  { description: 'The stored asset' },
);

const AssetRevision = Type.Object({
  revision: Type.Integer({ description: 'Revision number' }),
  content_type: Type.String({ description: 'Media type, read from the bytes' }),
  size: Type.Integer({ description: 'Bytes' }),
  sha256: Type.String({ description: 'SHA-256 of the bytes, hex' }),
  created_at: Type.String({ format: 'date-time', description: 'When this revision was uploaded' }),
  current: Type.Boolean({ description: 'The revision drafts print' }),
  used_by: Type.Array(
    Type.Object({
      template_id: Type.String({ description: 'Template id' }),
      template_name: Type.String({ description: 'Template name' }),
      ...VersionRef,
    }),
    { description: 'Published versions that print this revision' },
  ),
});

const AssetDetail = Type.Object(
  {
    ...assetFields,
    used_by: UsedBy,
    revisions: Type.Array(AssetRevision, {
      description: 'Every kept revision, newest first: the current one and those published versions print',
    }),
  },
  { description: 'An asset name, its revisions, and the templates and versions that use them' },
);

const NameParams = Type.Object({
  '*': Type.String({ minLength: 1, maxLength: 600, description: 'The asset name; may contain `/`' }),
});
const RevisionQuery = Type.Object({
  revision: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 2_147_483_647,
      description: "A revision number: that revision's bytes instead of the current one's",
    }),
  ),
});

const UPLOAD_DESCRIPTION =
  "Uploads an image (PNG, JPEG, GIF, WebP, SVG), font (WOFF2, WOFF, TTF, OTF) or stylesheet (CSS) for this account's templates. " +
  'Send `multipart/form-data` with a `file` part (and optionally a `name` field; the file name is used otherwise), or JSON ' +
  '`{"name": "logo.png", "content_base64": "iVBORw0…", "content_type": "image/png"}`. The type is taken from the bytes, not the name: anything else is a 422. ' +
  'Uploading a name again adds a revision: drafts print the newest, published versions keep printing the revision they were published with; ' +
  '`replaced` says whether the name had a file, `used_by` which templates and versions use it. ' +
  `Limits: ${ASSET_MAX_BYTES / (1024 * 1024)} MiB per file, PRESSROOM_ASSET_ACCOUNT_MAX_BYTES per account for every kept revision (413). Free of charge.`;

/**
 * True when the client's most preferred media range (highest q, the first listed on a tie) is
 * `application/json`: it asks for the asset's description, not its bytes (`*\/*`, an image type, no
 * Accept at all: the bytes, as before revisions existed).
 */
function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  let best: { type: string; q: number } | undefined;
  for (const range of accept.split(',').slice(0, 32)) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (type !== '' && Number.isFinite(q) && q > 0 && (!best || q > best.q)) best = { type, q };
  }
  return best?.type === 'application/json';
}

function nameOf(request: FastifyRequest): string {
  const name = (request.params as { '*': string })['*'];
  const problem = assetNameProblem(name);
  if (problem) throw new ValidationError([{ loc: ['path', 'name'], msg: problem, type: 'value_error' }]);
  return name;
}

/** Reads the upload from a JSON or multipart body. */
async function readUpload(request: FastifyRequest): Promise<AssetUpload> {
  const body = request.body;
  if (Buffer.isBuffer(body)) {
    let form: FormData;
    try {
      form = await new Response(new Uint8Array(body), {
        headers: { 'content-type': String(request.headers['content-type']) },
      }).formData();
    } catch {
      throw new ValidationError([
        { loc: ['body'], msg: 'The multipart/form-data body could not be read', type: 'value_error' },
      ]);
    }
    const file = form.get('file');
    if (!file || typeof file === 'string')
      throw new ValidationError([
        { loc: ['body', 'file'], msg: 'A file part named "file" is required', type: 'missing' },
      ]);
    const named = form.get('name');
    const name = typeof named === 'string' && named !== '' ? named : file.name;
    return {
      name,
      bytes: Buffer.from(await file.arrayBuffer()),
      contentType: file.type || null,
      nameLoc: ['body', 'name'],
      fileLoc: ['body', 'file'],
    };
  }
  const json = (body ?? {}) as Record<string, unknown>;
  const issues = [];
  if (typeof json.name !== 'string')
    issues.push({ loc: ['body', 'name'], msg: 'Field required (a string)', type: 'missing' });
  if (typeof json.content_base64 !== 'string')
    issues.push({ loc: ['body', 'content_base64'], msg: 'Field required (the file, base64-encoded)', type: 'missing' });
  if (json.content_type !== undefined && json.content_type !== null && typeof json.content_type !== 'string')
    issues.push({ loc: ['body', 'content_type'], msg: 'Must be a string', type: 'type_error' });
  if (issues.length > 0) throw new ValidationError(issues);
  const base64 = (json.content_base64 as string).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64))
    throw new ValidationError([{ loc: ['body', 'content_base64'], msg: 'Must be base64', type: 'value_error' }]);
  return {
    name: json.name as string,
    bytes: Buffer.from(base64, 'base64'),
    contentType: (json.content_type as string | null | undefined) ?? null,
    nameLoc: ['body', 'name'],
    fileLoc: ['body', 'content_base64'],
  };
}

/** Registers the asset routes (in their own scope: the multipart parser is theirs only). */
export function assetRoutes(app: FastifyInstance, deps: { assets: AssetService; maxBytes: number }): void {
  // base64 makes 4 bytes of 3; a little room for the JSON or multipart around it.
  const bodyLimit = Math.ceil((deps.maxBytes * 4) / 3) + 64 * 1024;
  app.register(async (scope) => {
    scope.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit }, (_request, body, done) =>
      done(null, body),
    );
    const typed = scope.withTypeProvider<TypeBoxTypeProvider>();

    typed.post('/v1/assets', {
      config: { auth: 'api_key' },
      bodyLimit,
      schema: {
        tags: ['Assets'],
        operationId: 'uploadAsset',
        summary: 'Upload an asset (logo, font, stylesheet)',
        description: UPLOAD_DESCRIPTION,
        response: {
          201: {
            ...UploadedAsset,
            description: 'The stored asset',
            examples: [
              {
                name: 'logo.png',
                content_type: 'image/png',
                size: 12840,
                sha256: SHA_EXAMPLE,
                created_at: '2026-01-05T10:00:00.000Z',
                updated_at: '2026-02-01T09:30:00.000Z',
                revision: 2,
                replaced: true,
                used_by: [
                  {
                    template_id: 'a1b2c3d4e5f6',
                    template_name: 'Branded',
                    draft: true,
                    versions: [{ version_number: 1, tag: 'v1', revision: 1 }],
                    computed: false,
                  },
                ],
              },
            ],
          },
          ...errorResponses(401, 403, 413, 422, 429, 502),
        },
      },
      handler: async (request, reply) => {
        const stored = await deps.assets.put(request.caller.accountId, await readUpload(request));
        return reply.code(201).send(stored);
      },
    });

    typed.get('/v1/assets', {
      config: { auth: 'api_key' },
      schema: {
        tags: ['Assets'],
        operationId: 'listAssets',
        summary: 'List assets',
        description: "This account's asset names with their current revisions and the templates using each, by name.",
        response: {
          200: Type.Object(
            { assets: Type.Array(ListedAsset, { description: "This account's assets, sorted by name" }) },
            { description: 'The assets' },
          ),
          ...errorResponses(401, 403, 429),
        },
      },
      handler: async (request) => ({ assets: await deps.assets.list(request.caller.accountId) }),
    });

    typed.get('/v1/assets/*', {
      config: { auth: 'api_key' },
      schema: {
        tags: ['Assets'],
        operationId: 'getAsset',
        summary: 'Download an asset, or list its revisions',
        description:
          "The bytes of an asset's current revision, with its media type (`?revision=N`: that revision's). With `Accept: application/json`, " +
          "the asset's description instead: every kept revision and the templates and published versions that print each. Names may contain `/` (`/v1/assets/fonts/brand.woff2`).",
        params: NameParams,
        querystring: RevisionQuery,
        response: {
          200: mediaResponse('The asset', {
            'application/octet-stream': Type.Unsafe<Buffer>({
              type: 'string',
              format: 'binary',
              description: "The bytes (Content-Type is the asset's type)",
            }),
            'application/json': AssetDetail,
          }),
          ...errorResponses(401, 403, 404, 422, 429),
        },
      },
      handler: async (request, reply) => {
        const name = nameOf(request);
        const revision = request.query.revision;
        if (revision === undefined && wantsJson(request.headers.accept)) {
          return reply.header('vary', 'Accept').send(await deps.assets.describe(request.caller.accountId, name));
        }
        const { contentType, sha256, body } = await deps.assets.read(request.caller.accountId, name, revision);
        return reply
          .header('content-type', contentType)
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
          .header('etag', `"${sha256}"`)
          .header('cache-control', 'private, no-cache')
          .header('vary', 'Accept')
          .send(body);
      },
    });

    typed.delete('/v1/assets/*', {
      config: { auth: 'api_key' },
      schema: {
        tags: ['Assets'],
        operationId: 'deleteAsset',
        summary: 'Delete an asset',
        description:
          'Deletes the asset name and its revisions; drafts that use it afterwards get an ASSET_NOT_FOUND warning. A name a published version prints is refused with 409 ASSET_IN_USE naming the versions: delete them first.',
        params: NameParams,
        response: { 200: SuccessBody, ...errorResponses(401, 403, 404, 409, 422, 429) },
      },
      handler: async (request) => {
        await deps.assets.remove(request.caller.accountId, nameOf(request));
        return { success: true };
      },
    });
  });
}
