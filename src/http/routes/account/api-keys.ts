/** Self-service API keys for the signed-in account (the studio's key screen). */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AccountService } from '../../../accounts/accounts.js';
import { Nullable, SuccessBody, errorResponses, isoTime } from '../../schemas.js';

export function apiKeyRoutes(app: FastifyInstance, accounts: AccountService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Account'];

  r.get('/v1/account/api-keys', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'listApiKeys',
      tags,
      summary: 'List API keys',
      description: "The account's API keys by prefix; a key itself is shown only once, when created.",
      response: {
        200: Type.Object({
          api_keys: Type.Array(
            Type.Object({
              prefix: Type.String({ description: "The key's first 12 characters" }),
              created_at: Type.String({ format: 'date-time', description: 'When it was created (ISO 8601)' }),
              revoked_at: Nullable(
                Type.String({ format: 'date-time', description: 'When it was revoked; null while it works' }),
              ),
            }),
            { description: 'Keys, revoked ones included' },
          ),
        }),
        ...errorResponses(401, 429),
      },
    },
    handler: async (request) => ({
      api_keys: (await accounts.listApiKeys(request.caller.accountId)).map((k) => ({
        prefix: k.prefix,
        created_at: isoTime(k.createdAt),
        revoked_at: k.revokedAt === null ? null : isoTime(k.revokedAt),
      })),
    }),
  });

  r.post('/v1/account/api-keys', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'createApiKey',
      tags,
      summary: 'Create an API key',
      description: 'A new key for the same account. Keep it: it is shown only in this answer.',
      response: {
        201: Type.Object({ api_key: Type.String({ description: 'The new key (pr_…), shown once' }) }),
        ...errorResponses(401, 429),
      },
    },
    handler: async (request, reply) =>
      reply.code(201).send({ api_key: await accounts.createApiKey(request.caller.accountId) }),
  });

  r.delete('/v1/account/api-keys/:prefix', {
    config: { auth: 'api_key' },
    schema: {
      operationId: 'revokeApiKey',
      tags,
      summary: 'Revoke an API key',
      description:
        "The key stops working on the next request. The account's last working key is refused (409 LAST_API_KEY, nothing changed): access tokens only read, so without a key nothing could make a new one. Create a new key first, then revoke the old one. (The operator's DELETE /v1/admin/api-keys/{prefix} revokes any key.)",
      params: Type.Object({
        prefix: Type.String({ minLength: 12, maxLength: 12, description: "The key's first 12 characters" }),
      }),
      response: { 200: SuccessBody, ...errorResponses(401, 404, 409, 422, 429) },
    },
    handler: async (request) => {
      await accounts.revokeOwnApiKey(request.caller.accountId, request.params.prefix);
      return { success: true };
    },
  });
}
