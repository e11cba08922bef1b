/** Self-service API keys for the signed-in account (the studio's key screen). */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AccountService } from '../../accounts/accounts.js';
import { Nullable, SuccessBody, errorResponses, isoTime } from '../schemas.js';

export function apiKeyRoutes(app: FastifyInstance, accounts: AccountService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['account'];

  r.get('/v1/account/api-keys', {
    config: { auth: 'api_key' },
    schema: {
      tags,
      summary: "The account's API keys (prefixes only; keys are never shown again)",
      response: {
        200: Type.Object({ api_keys: Type.Array(Type.Object({ prefix: Type.String(), created_at: Type.String(), revoked_at: Nullable(Type.String()) })) }),
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
    schema: { tags, summary: 'Create an API key (shown once)', response: { 201: Type.Object({ api_key: Type.String() }), ...errorResponses(401, 429) } },
    handler: async (request, reply) => reply.code(201).send({ api_key: await accounts.createApiKey(request.caller.accountId) }),
  });

  r.delete('/v1/account/api-keys/:prefix', {
    config: { auth: 'api_key' },
    schema: {
      tags,
      summary: 'Revoke one of the account’s API keys',
      params: Type.Object({ prefix: Type.String({ minLength: 12, maxLength: 12 }) }),
      response: { 200: SuccessBody, ...errorResponses(401, 404, 422, 429) },
    },
    handler: async (request) => {
      await accounts.revokeApiKey(request.params.prefix, request.caller.accountId);
      return { success: true };
    },
  });
}
