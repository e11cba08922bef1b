/** Customer S3 storage settings: read (secret masked), save, delete, and a connection test. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { S3IntegrationService } from '../../../customer-buckets/s3-integration.js';
import { Nullable, SuccessBody, errorResponses, ref } from '../../schemas.js';

const S3Settings = Type.Object(
  {
    endpoint_url: Type.String({
      minLength: 10,
      maxLength: 200,
      description: 'https:// endpoint of the S3-compatible service',
    }),
    access_key_id: Type.String({ minLength: 16, maxLength: 128, description: 'Access key ID' }),
    secret_access_key: Type.Optional(
      Nullable(
        Type.String({
          minLength: 16,
          maxLength: 128,
          description: 'Required for a new configuration; omit on update to keep the stored one',
        }),
      ),
    ),
    bucket_name: Type.String({
      minLength: 3,
      maxLength: 63,
      pattern: '^[a-z0-9][a-z0-9.-]*[a-z0-9]$',
      description: 'Default bucket: lowercase letters, digits, dots and hyphens',
    }),
    default_prefix: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 500,
          pattern: '^[A-Za-z0-9_./-]*$',
          default: '',
          description: 'Key prefix for uploaded PDFs, e.g. invoices/2026/',
        }),
      ),
    ),
  },
  {
    examples: [
      {
        endpoint_url: 'https://s3.eu-central-1.amazonaws.com',
        access_key_id: 'AKIAIOSFODNN7EXAMPLE',
        secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        bucket_name: 'my-pdf-bucket',
        default_prefix: 'invoices/',
      },
    ],
  },
);

export function s3Routes(app: FastifyInstance, s3: S3IntegrationService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Integrations'];

  r.get('/v1/integrations/s3', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'getS3Config',
      tags,
      summary: 'Get S3 configuration',
      description: 'The stored configuration with the secret masked; 404 when none is configured.',
      response: {
        200: Type.Object({
          configured: Type.Boolean({ description: 'Always true here (no configuration: 404)' }),
          endpoint_url: Type.String({ description: 'Endpoint' }),
          access_key_id: Type.String({ description: 'Access key ID' }),
          secret_access_key_masked: Type.String({
            description: "The secret's first and last 4 characters around an ellipsis",
          }),
          bucket_name: Type.String({ description: 'Default bucket' }),
          default_prefix: Type.String({ description: 'Default key prefix' }),
        }),
        ...errorResponses(401, 404, 422, 429),
      },
    },
    handler: async (request) => s3.get(request.caller.accountId),
  });

  r.post('/v1/integrations/s3', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'saveS3Config',
      tags,
      summary: 'Save S3 configuration',
      description:
        'Creates or replaces the configuration; the secret is stored encrypted. An endpoint on a private address is refused unless PRESSROOM_ALLOW_PRIVATE_NETWORKS=true.',
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
    schema: {
      operationId: 'deleteS3Config',
      tags,
      summary: 'Delete S3 configuration',
      description: 'Deletes the configuration for good; later generations use signed links.',
      response: { 200: SuccessBody, ...errorResponses(401, 422, 429) },
    },
    handler: async (request) => {
      await s3.remove(request.caller.accountId);
      return { success: true };
    },
  });

  r.post('/v1/integrations/s3/test', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'testS3Connection',
      tags,
      summary: 'Test S3 connection',
      description:
        'Checks the stored configuration: the bucket is reachable, then a small object is written and removed. Failures answer 400 {detail}.',
      response: {
        200: Type.Object({
          success: Type.Boolean({ description: 'true: the bucket is usable' }),
          message: Type.String({ description: 'What was checked' }),
        }),
        400: ref('DetailError'),
        ...errorResponses(401, 422, 429),
      },
    },
    handler: async (request) => ({ success: true, message: await s3.test(request.caller.accountId) }),
  });
}
