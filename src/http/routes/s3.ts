/** Customer S3 storage settings: read (secret masked), save, delete, and a connection test. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { S3IntegrationService } from '../../integrations/s3-integration.js';
import { Nullable, SuccessBody, errorResponses, ref } from '../schemas.js';

const S3Settings = Type.Object({
  endpoint_url: Type.String({ minLength: 10, maxLength: 200, description: 'https:// endpoint of the S3-compatible service' }),
  access_key_id: Type.String({ minLength: 16, maxLength: 128 }),
  secret_access_key: Type.Optional(Nullable(Type.String({ minLength: 16, maxLength: 128, description: 'Required for a new configuration; omit on update to keep the stored one' }))),
  bucket_name: Type.String({ minLength: 3, maxLength: 63, pattern: '^[a-z0-9][a-z0-9.-]*[a-z0-9]$' }),
  default_prefix: Type.Optional(Nullable(Type.String({ maxLength: 500, pattern: '^[A-Za-z0-9_./-]*$', default: '' }))),
});

export function s3Routes(app: FastifyInstance, s3: S3IntegrationService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['integrations'];

  r.get('/v1/integrations/s3', {
    config: { auth: 'api_key' },
    schema: {
      tags,
      summary: 'Read the S3 configuration (secret masked)',
      response: {
        200: Type.Object({
          configured: Type.Boolean(),
          endpoint_url: Type.String(),
          access_key_id: Type.String(),
          secret_access_key_masked: Type.String(),
          bucket_name: Type.String(),
          default_prefix: Type.String(),
        }),
        ...errorResponses(401, 404, 422, 429),
      },
    },
    handler: async (request) => s3.get(request.caller.accountId),
  });

  r.post('/v1/integrations/s3', {
    config: { auth: 'api_key' },
    schema: {
      tags,
      summary: 'Save or update the S3 configuration',
      body: S3Settings,
      response: { 200: SuccessBody, 400: ref('DetailError'), ...errorResponses(401, 422, 429) },
    },
    handler: async (request) => {
      await s3.save(request.caller.accountId, request.body);
      return { success: true };
    },
  });

  r.delete('/v1/integrations/s3', {
    config: { auth: 'api_key' },
    schema: { tags, summary: 'Delete the S3 configuration for good', response: { 200: SuccessBody, ...errorResponses(401, 422, 429) } },
    handler: async (request) => {
      await s3.remove(request.caller.accountId);
      return { success: true };
    },
  });

  r.post('/v1/integrations/s3/test', {
    config: { auth: 'api_key' },
    schema: {
      tags,
      summary: 'Test the stored configuration: bucket reachable, then a small object written and removed',
      response: { 200: Type.Object({ success: Type.Boolean(), message: Type.String() }), 400: ref('DetailError'), ...errorResponses(401, 422, 429) },
    },
    handler: async (request) => ({ success: true, message: await s3.test(request.caller.accountId) }),
  });
}
