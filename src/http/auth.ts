/**
 * Credentials and rate limits, in the fixed order every request goes through:
 * credential (401) → rate limit (429) → body and schema (413/422) → the route's own checks.
 * A route says what it accepts with `config.auth`:
 * - `api_key`: the `x-api-key` header (or `Authorization: Bearer <api key>`, for clients generated from the
 *   OpenAPI bearer scheme);
 * - `read`: the same, or a JWT access token as `Authorization: Bearer <token>`: only the endpoints a
 *   template picker or input form needs (TOKEN_ENDPOINTS; the asset library is not one of them);
 * - `admin`: `Authorization: Bearer $PRESSROOM_ADMIN_TOKEN`;
 * - `public`: nothing (health, docs, signed download links).
 * Every authenticated request counts against the account's rate limit, except the studio's free ones:
 * a read (GET) marked by the studio's client, or a route with `studioBudget` (the preview), spends the
 * studio's own budget instead, and reports the account's limit as it stands (docs/rate-limits.md).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountService, Caller } from '../accounts/accounts.js';
import { isApiKeyShaped } from '../accounts/credentials.js';
import type { RateLimiter, RateLimitDecision } from '../rate-limits/rate-limiter.js';
import { consumeStudioBudget, STUDIO_REQUESTS_PER_MINUTE } from '../rate-limits/studio-budget.js';
import { safeEqual } from '../shared/crypto.js';
import { AppError } from '../shared/errors.js';
import { STUDIO_CLIENT, STUDIO_CLIENT_HEADER } from '../shared/studio-client.js';

export type AuthMode = 'api_key' | 'read' | 'admin' | 'public';

/** The endpoints with `read` auth, as error messages and docs/accounts.md name them. */
export const TOKEN_ENDPOINTS =
  'GET /v1/templates, GET /v1/templates/{id}/fields, GET /v1/templates/{id}/layers, GET /v1/account and GET /v1/account/transactions';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** A free route that is not a read whose studio requests still spend the studio's budget (the preview, which has its own too). */
    studioBudget?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated account (routes with `api_key` or `read` auth). */
    caller: Caller;
  }
}

export interface AuthOptions {
  accounts: AccountService;
  rateLimiter: RateLimiter;
  adminToken: string | undefined;
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** The API key a request presents: `x-api-key`, or an API-key-shaped `Authorization: Bearer` (MCP clients send either). */
export function presentedApiKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const bearer = bearerToken(request);
  return bearer && isApiKeyShaped(bearer) ? bearer : undefined;
}

/** Who calls, by the key or token the request presents; UNAUTHORIZED when it is not a valid one for `mode`. */
export async function resolveCaller(
  request: FastifyRequest,
  mode: 'api_key' | 'read',
  accounts: AccountService,
): Promise<Caller> {
  const apiKeyHeader = request.headers['x-api-key'];
  const apiKey = typeof apiKeyHeader === 'string' ? apiKeyHeader.trim() : undefined;
  if (apiKey) {
    const caller = await accounts.authenticateApiKey(apiKey);
    if (caller) return caller;
    throw new AppError('UNAUTHORIZED', 'The API key is invalid or revoked.');
  }
  const bearer = bearerToken(request);
  if (bearer) {
    if (isApiKeyShaped(bearer)) {
      const caller = await accounts.authenticateApiKey(bearer);
      if (caller) return caller;
      throw new AppError('UNAUTHORIZED', 'The API key is invalid or revoked.');
    }
    if (mode !== 'read') {
      throw new AppError(
        'UNAUTHORIZED',
        `This endpoint needs an API key in the x-api-key header; access tokens are accepted only on ${TOKEN_ENDPOINTS}.`,
      );
    }
    const caller = await accounts.authenticateAccessToken(bearer);
    if (caller) return caller;
    throw new AppError('UNAUTHORIZED', 'The access token is invalid, expired or revoked.');
  }
  throw new AppError('UNAUTHORIZED', 'Missing credentials: send your API key in the x-api-key header.');
}

export function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  reply.header('x-ratelimit-limit', String(decision.limit));
  reply.header('x-ratelimit-remaining', String(decision.remaining));
  reply.header('x-ratelimit-reset', String(decision.resetAt));
}

/**
 * True when the studio's budget pays for the request: sent by the studio's client with an API key, and
 * free: a read, or a route that says so. Everything else (generation, writes) is the account's.
 */
function spendsStudioBudget(request: FastifyRequest): boolean {
  if (request.headers[STUDIO_CLIENT_HEADER] !== STUDIO_CLIENT || request.caller.credential !== 'api_key') return false;
  return request.method === 'GET' || request.method === 'HEAD' || request.routeOptions.config?.studioBudget === true;
}

/** Counts the request against the budget that pays for it; throws RATE_LIMITED when that budget is spent. */
async function countRequest(request: FastifyRequest, reply: FastifyReply, rateLimiter: RateLimiter): Promise<void> {
  if (spendsStudioBudget(request)) {
    const studio = await consumeStudioBudget(rateLimiter, request.caller.accountId);
    if (!studio.allowed) {
      throw new AppError(
        'RATE_LIMITED',
        `The studio has made its ${STUDIO_REQUESTS_PER_MINUTE} requests of this minute; it goes on in ${studio.retryAfterSeconds} s. Your API rate limit is not affected.`,
        {
          details: { retryAfterSeconds: studio.retryAfterSeconds },
        },
      );
    }
    // The headers keep telling the account's limit, which the studio shows: as it stands, not counted.
    const account = await rateLimiter.peek(request.caller);
    if (account) setRateLimitHeaders(reply, account);
    return;
  }
  const decision = await rateLimiter.consume(request.caller);
  if (!decision) return;
  setRateLimitHeaders(reply, decision);
  if (!decision.allowed) {
    throw new AppError(
      'RATE_LIMITED',
      `Rate limit exceeded: at most ${decision.limit} requests in this window. Retry after ${decision.retryAfterSeconds} s.`,
      {
        details: { retryAfterSeconds: decision.retryAfterSeconds },
      },
    );
  }
}

/** Registers the credential and rate-limit hook (runs at onRequest, before the body is read). */
export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  app.decorateRequest('caller', undefined as unknown as Caller);
  app.addHook('onRequest', async (request, reply) => {
    const mode = request.routeOptions.config?.auth ?? 'public';
    if (mode === 'public') return;
    if (mode === 'admin') {
      const token = bearerToken(request);
      if (!options.adminToken || !token || !safeEqual(token, options.adminToken)) {
        throw new AppError('UNAUTHORIZED', 'Admin endpoints need Authorization: Bearer <PRESSROOM_ADMIN_TOKEN>.');
      }
      return;
    }
    request.caller = await resolveCaller(request, mode, options.accounts);
    await countRequest(request, reply, options.rateLimiter);
  });
}
