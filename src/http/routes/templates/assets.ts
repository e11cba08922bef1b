/**
 * The asset library (docs/assets.md): `POST /v1/assets` (multipart/form-data with a `file` part and
 * an optional `name`, or JSON `{name, content_base64, content_type?}`), `GET /v1/assets`,
 * `GET /v1/assets/{name}` (the bytes), `DELETE /v1/assets/{name}`. Names may contain `/`, so the
 * name routes are wildcards. Free of charge. API keys only: an access token is for template pickers
 * and input forms (docs/assets.md), and an account's files — licensed fonts among them — are neither.
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

const AssetInfo = Type.Object(
  {
    name: Type.String({
      description: `Asset name (${ASSET_NAME_RULE}); use it in templates as {{ asset('name') }}`,
      examples: ['logo.png'],
    }),
    content_type: Type.String({
      description: `Media type, read from the bytes: ${ASSET_CONTENT_TYPES.join(', ')}`,
      examples: ['image/png'],
    }),
    size: Type.Integer({ description: 'Bytes', examples: [12840] }),
    sha256: Type.String({
      description: 'SHA-256 of the bytes, hex',
      examples: ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
    }),
    created_at: Type.String({ format: 'date-time', description: 'First upload under this name' }),
    updated_at: Type.String({ format: 'date-time', description: 'Last upload under this name' }),
  },
  { description: 'An asset of this account' },
);

const NameParams = Type.Object({
  '*': Type.String({ minLength: 1, maxLength: 600, description: 'The asset name; may contain `/`' }),
});

const UPLOAD_DESCRIPTION =
  "Uploads an image (PNG, JPEG, GIF, WebP, SVG), font (WOFF2, WOFF, TTF, OTF) or stylesheet (CSS) for this account's templates. " +
  'Send `multipart/form-data` with a `file` part (and optionally a `name` field; the file name is used otherwise), or JSON ' +
  '`{"name": "logo.png", "content_base64": "iVBORw0…", "content_type": "image/png"}`. The type is taken from the bytes, not the name: anything else is a 422. ' +
  `Uploading a name again replaces it. Limits: ${ASSET_MAX_BYTES / (1024 * 1024)} MiB per file, PRESSROOM_ASSET_ACCOUNT_MAX_BYTES per account (413). Free of charge.`;

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
            ...AssetInfo,
            description: 'The stored asset',
            examples: [
              {
                name: 'logo.png',
                content_type: 'image/png',
                size: 12840,
                sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
                created_at: '2026-01-05T10:00:00.000Z',
                updated_at: '2026-01-05T10:00:00.000Z',
              },
            ],
          },
          ...errorResponses(401, 403, 413, 422, 429, 502),
        },
      },
      handler: async (request, reply) => {
        const info = await deps.assets.put(request.caller.accountId, await readUpload(request));
        return reply.code(201).send(info);
      },
    });

    typed.get('/v1/assets', {
      config: { auth: 'api_key' },
      schema: {
        tags: ['Assets'],
        operationId: 'listAssets',
        summary: 'List assets',
        description: "This account's assets, by name.",
        response: {
          200: Type.Object(
            { assets: Type.Array(AssetInfo, { description: "This account's assets, sorted by name" }) },
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
        summary: 'Download an asset',
        description:
          'The bytes of an asset, with its media type. Names may contain `/` (`/v1/assets/fonts/brand.woff2`).',
        params: NameParams,
        response: {
          200: mediaResponse('The asset', {
            'application/octet-stream': Type.Unsafe<Buffer>({
              type: 'string',
              format: 'binary',
              description: "The bytes (Content-Type is the asset's type)",
            }),
          }),
          ...errorResponses(401, 403, 404, 422, 429),
        },
      },
      handler: async (request, reply) => {
        const { info, body } = await deps.assets.read(request.caller.accountId, nameOf(request));
        return reply
          .header('content-type', info.content_type)
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
          .header('etag', `"${info.sha256}"`)
          .header('cache-control', 'private, no-cache')
          .send(body);
      },
    });

    typed.delete('/v1/assets/*', {
      config: { auth: 'api_key' },
      schema: {
        tags: ['Assets'],
        operationId: 'deleteAsset',
        summary: 'Delete an asset',
        description: 'Deletes the asset; documents that use it afterwards get an ASSET_NOT_FOUND warning.',
        params: NameParams,
        response: { 200: SuccessBody, ...errorResponses(401, 403, 404, 422, 429) },
      },
      handler: async (request) => {
        await deps.assets.remove(request.caller.accountId, nameOf(request));
        return { success: true };
      },
    });
  });
}
