/** The admin API (enabled by PRESSROOM_ADMIN_TOKEN; without it these routes do not exist and answer 404). */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { RATE_LIMIT_MAXIMUMS, type AccountService } from '../../accounts/accounts.js';
import { ACCESS_TOKEN_TTL_SECONDS } from '../../accounts/credentials.js';
import { MAX_BALANCE, MAX_GRANT_CREDITS, type CreditLedger } from '../../credits/ledger.js';
import { Nullable, StringEnum, SuccessBody, errorResponses, isoTime } from '../schemas.js';

const AccountIdParams = Type.Object({ account_id: Type.String({ minLength: 1, maxLength: 64 }) });

export function adminRoutes(app: FastifyInstance, deps: { accounts: AccountService; ledger: CreditLedger }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['admin'];

  r.post('/v1/admin/accounts', {
    config: { auth: 'admin' },
    schema: {
      tags,
      summary: 'Create an account (its first API key is shown once)',
      body: Type.Object({
        email: Type.Optional(Nullable(Type.String({ maxLength: 320, format: 'email' }))),
        credits: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_GRANT_CREDITS, default: 0 })),
        plan: Type.Optional(StringEnum(['free', 'pro', 'enterprise'] as const, { default: 'free' })),
        rate_limit: Type.Optional(
          Type.Object({
            per_minute: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: RATE_LIMIT_MAXIMUMS.perMinute }))),
            per_day: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: RATE_LIMIT_MAXIMUMS.perDay }))),
          }),
        ),
      }),
      response: {
        201: Type.Object({ account_id: Type.String(), api_key: Type.String(), plan: Type.String(), credits: Type.Integer() }),
        ...errorResponses(401, 422),
      },
    },
    handler: async (request, reply) => {
      const body = request.body;
      const created = await deps.accounts.create({
        email: body.email ?? null,
        credits: body.credits ?? 0,
        plan: body.plan ?? 'free',
        rateLimit: { perMinute: body.rate_limit?.per_minute ?? null, perDay: body.rate_limit?.per_day ?? null },
      });
      return reply.code(201).send(created);
    },
  });

  r.post('/v1/admin/accounts/:account_id/credits', {
    config: { auth: 'admin' },
    schema: {
      tags,
      summary: 'Add credits (PURCHASE or BONUS)',
      params: AccountIdParams,
      body: Type.Object({
        credits: Type.Integer({ minimum: 1, maximum: MAX_GRANT_CREDITS }),
        transaction_type: StringEnum(['PURCHASE', 'BONUS'] as const),
      }),
      response: { 200: Type.Object({ credits: Type.Integer({ description: `New balance (at most ${MAX_BALANCE}, or 422 BALANCE_LIMIT_EXCEEDED)` }) }), ...errorResponses(401, 404, 422) },
    },
    handler: async (request) => ({
      credits: await deps.ledger.grant(request.params.account_id, request.body.credits, request.body.transaction_type),
    }),
  });

  r.post('/v1/admin/accounts/:account_id/api-keys', {
    config: { auth: 'admin' },
    schema: {
      tags,
      summary: 'Create another API key (shown once)',
      params: AccountIdParams,
      response: { 201: Type.Object({ api_key: Type.String() }), ...errorResponses(401, 404, 422) },
    },
    handler: async (request, reply) => reply.code(201).send({ api_key: await deps.accounts.createApiKey(request.params.account_id) }),
  });

  r.delete('/v1/admin/api-keys/:prefix', {
    config: { auth: 'admin' },
    schema: {
      tags,
      summary: "Revoke an API key by its prefix (the key's first 12 characters)",
      params: Type.Object({ prefix: Type.String({ minLength: 12, maxLength: 12 }) }),
      response: { 200: SuccessBody, ...errorResponses(401, 404, 422) },
    },
    handler: async (request) => {
      await deps.accounts.revokeApiKey(request.params.prefix);
      return { success: true };
    },
  });

  r.post('/v1/admin/accounts/:account_id/access-tokens', {
    config: { auth: 'admin' },
    schema: {
      tags,
      summary: 'Issue a JWT access token for the read-only endpoints',
      params: AccountIdParams,
      body: Type.Optional(Type.Object({ ttl_seconds: Type.Optional(Type.Integer({ minimum: ACCESS_TOKEN_TTL_SECONDS.min, maximum: ACCESS_TOKEN_TTL_SECONDS.max, default: 3600 })) })),
      response: { 201: Type.Object({ access_token: Type.String(), expires_in: Type.Integer() }), ...errorResponses(401, 404, 422) },
    },
    handler: async (request, reply) => {
      const ttl = request.body?.ttl_seconds ?? 3600;
      const token = await deps.accounts.issueAccessToken(request.params.account_id, ttl);
      return reply.code(201).send({ access_token: token, expires_in: ttl });
    },
  });
  r.post('/v1/admin/accounts/:account_id/tokens/revoke', {
    config: { auth: 'admin' },
    schema: {
      tags,
      summary: "Revoke the account's access tokens",
      description: 'Every access token issued to the account up to now answers 401 from the next request on; tokens issued afterwards work. API keys are not affected.',
      params: AccountIdParams,
      response: {
        200: Type.Object({ revoked_before: Type.String({ format: 'date-time', description: 'Tokens issued at or before this moment are refused' }) }),
        ...errorResponses(401, 404, 422),
      },
    },
    handler: async (request) => {
      const { revokedBefore } = await deps.accounts.revokeAccessTokens(request.params.account_id);
      return { revoked_before: isoTime(revokedBefore) };
    },
  });
}
