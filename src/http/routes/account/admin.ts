/** The admin API (enabled by PRESSROOM_ADMIN_TOKEN; without it these routes do not exist and answer 404). */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { RATE_LIMIT_MAXIMUMS, type AccountService } from '../../../accounts/accounts.js';
import { ACCESS_TOKEN_TTL_SECONDS } from '../../../accounts/credentials.js';
import { MAX_BALANCE, MAX_GRANT_CREDITS, type CreditLedger } from '../../../credits/ledger.js';
import { Nullable, StringEnum, SuccessBody, errorResponses, isoTime } from '../../schemas.js';

const AccountIdParams = Type.Object({
  account_id: Type.String({ minLength: 1, maxLength: 64, description: 'Account ID (acc_…)' }),
});
const PLAN_DESCRIPTION = 'Rate-limit plan: free, pro or enterprise (limits in PRESSROOM_PLAN_*)';

export function adminRoutes(app: FastifyInstance, deps: { accounts: AccountService; ledger: CreditLedger }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Admin'];

  r.post('/v1/admin/accounts', {
    config: { auth: 'admin' },
    schema: {
      operationId: 'adminCreateAccount',
      tags,
      summary: 'Create an account',
      description:
        'The account and its first API key, which is shown only in this answer. Initial credits are recorded as a BONUS.',
      body: Type.Object(
        {
          email: Type.Optional(
            Nullable(Type.String({ maxLength: 320, format: 'email', description: "The account's e-mail address" })),
          ),
          credits: Type.Optional(
            Type.Integer({ minimum: 0, maximum: MAX_GRANT_CREDITS, default: 0, description: 'Initial credits' }),
          ),
          plan: Type.Optional(
            StringEnum(['free', 'pro', 'enterprise'] as const, { default: 'free', description: PLAN_DESCRIPTION }),
          ),
          rate_limit: Type.Optional(
            Type.Object(
              {
                per_minute: Type.Optional(
                  Nullable(
                    Type.Integer({
                      minimum: 1,
                      maximum: RATE_LIMIT_MAXIMUMS.perMinute,
                      description: "Requests per minute instead of the plan's",
                    }),
                  ),
                ),
                per_day: Type.Optional(
                  Nullable(
                    Type.Integer({
                      minimum: 1,
                      maximum: RATE_LIMIT_MAXIMUMS.perDay,
                      description: "Requests per day instead of the plan's",
                    }),
                  ),
                ),
              },
              { description: "Overrides of the plan's rate limits" },
            ),
          ),
        },
        { examples: [{ email: 'you@example.com', credits: 100, plan: 'pro' }] },
      ),
      response: {
        201: Type.Object({
          account_id: Type.String({ description: 'Account ID' }),
          api_key: Type.String({ description: 'Its first API key, shown once' }),
          plan: Type.String({ description: 'Rate-limit plan' }),
          credits: Type.Integer({ description: 'Credits' }),
        }),
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
      operationId: 'adminAddCredits',
      tags,
      summary: 'Add credits',
      description:
        'Adds credits as a PURCHASE or BONUS transaction. This is how a self-hosted Pressroom sells or grants credits.',
      params: AccountIdParams,
      body: Type.Object(
        {
          credits: Type.Integer({ minimum: 1, maximum: MAX_GRANT_CREDITS, description: 'Credits to add' }),
          transaction_type: StringEnum(['PURCHASE', 'BONUS'] as const, {
            description: 'How the transaction history records it',
          }),
        },
        { examples: [{ credits: 500, transaction_type: 'PURCHASE' }] },
      ),
      response: {
        200: Type.Object({
          credits: Type.Integer({ description: `New balance (at most ${MAX_BALANCE}, or 422 BALANCE_LIMIT_EXCEEDED)` }),
        }),
        ...errorResponses(401, 404, 422),
      },
    },
    handler: async (request) => ({
      credits: await deps.ledger.grant(request.params.account_id, request.body.credits, request.body.transaction_type),
    }),
  });

  r.post('/v1/admin/accounts/:account_id/api-keys', {
    config: { auth: 'admin' },
    schema: {
      operationId: 'adminCreateApiKey',
      tags,
      summary: 'Create an API key for an account',
      description: 'Another key for the account, shown only in this answer.',
      params: AccountIdParams,
      response: {
        201: Type.Object({ api_key: Type.String({ description: 'The new key, shown once' }) }),
        ...errorResponses(401, 404, 422),
      },
    },
    handler: async (request, reply) =>
      reply.code(201).send({ api_key: await deps.accounts.createApiKey(request.params.account_id) }),
  });

  r.delete('/v1/admin/api-keys/:prefix', {
    config: { auth: 'admin' },
    schema: {
      operationId: 'adminRevokeApiKey',
      tags,
      summary: 'Revoke an API key',
      description: "Revokes a key by its prefix (the key's first 12 characters); it stops working on the next request.",
      params: Type.Object({
        prefix: Type.String({ minLength: 12, maxLength: 12, description: "The key's first 12 characters" }),
      }),
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
      operationId: 'adminCreateAccessToken',
      tags,
      summary: 'Issue an access token',
      description:
        'A JWT for the four read-only endpoints (templates, fields, account, transactions), sent as Authorization: Bearer.',
      params: AccountIdParams,
      body: Type.Optional(
        Type.Object(
          {
            ttl_seconds: Type.Optional(
              Type.Integer({
                minimum: ACCESS_TOKEN_TTL_SECONDS.min,
                maximum: ACCESS_TOKEN_TTL_SECONDS.max,
                default: 3600,
                description: `Lifetime in seconds (${ACCESS_TOKEN_TTL_SECONDS.min}–${ACCESS_TOKEN_TTL_SECONDS.max})`,
              }),
            ),
          },
          { examples: [{ ttl_seconds: 3600 }] },
        ),
      ),
      response: {
        201: Type.Object({
          access_token: Type.String({ description: 'The JWT' }),
          expires_in: Type.Integer({ description: 'Seconds until it expires' }),
        }),
        ...errorResponses(401, 404, 422),
      },
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
      operationId: 'adminRevokeAccessTokens',
      tags,
      summary: "Revoke the account's access tokens",
      description:
        'Every access token issued to the account up to now answers 401 from the next request on; tokens issued afterwards work. API keys are not affected.',
      params: AccountIdParams,
      response: {
        200: Type.Object({
          revoked_before: Type.String({
            format: 'date-time',
            description: 'Tokens issued at or before this moment are refused',
          }),
        }),
        ...errorResponses(401, 404, 422),
      },
    },
    handler: async (request) => {
      const { revokedBefore } = await deps.accounts.revokeAccessTokens(request.params.account_id);
      return { revoked_before: isoTime(revokedBefore) };
    },
  });
}
