/**
 * The one place the studio talks to the API: every call sends `x-api-key` and the studio's mark (its
 * reads spend the studio's own budget, not the account's rate limit: docs/rate-limits.md), reports the
 * X-RateLimit-* headers, and turns a failed response into an ApiError carrying the parsed body.
 */
import { STUDIO_CLIENT, STUDIO_CLIENT_HEADER } from '../../../src/shared/studio-client.js';
import type { RateLimitState, ValidationIssue } from '../lib/api-types.js';
import { describeErrorBody, readRateLimit } from '../lib/format.js';
import { describeIssue, type PlaceNamer } from '../lib/messages.js';

/** A non-2xx answer (or a network failure, status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly retryAfterSeconds?: number,
  ) {
    super(describeErrorBody(status, body));
    this.name = 'ApiError';
  }

  /** The coded error's code (`TEMPLATE_NOT_FOUND`, …), when the body has one. */
  get code(): string | undefined {
    const b = this.body as { error?: unknown } | null;
    return b && typeof b.error === 'string' ? b.error : undefined;
  }
}

/**
 * The refusal as the user should see it: what was refused and where (named by `place`, as the screen
 * names it), in the studio's words, with the service's code as a reference.
 */
export function describeRefusal(error: unknown, place?: PlaceNamer): string {
  if (!(error instanceof ApiError)) return (error as Error).message;
  const body = error.body as { error?: string; message?: string; detail?: unknown } | null;
  if (body && Array.isArray(body.detail))
    return (body.detail as ValidationIssue[]).map((issue) => describeIssue(issue, place)).join('; ');
  return error.code ? `${error.message} (${error.code})` : error.message;
}

export interface RequestOptions {
  /** JSON, or FormData sent as multipart/form-data (uploads). */
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  signal?: AbortSignal;
  /** Extra request headers (an Idempotency-Key). */
  headers?: Record<string, string>;
}

export interface ApiClient {
  /** JSON in, JSON out. */
  json<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
  /** The raw response of a successful call (PDF bytes). */
  raw(method: string, path: string, options?: RequestOptions): Promise<Response>;
}

export interface ClientHooks {
  onRateLimit(state: RateLimitState): void;
  /** The key stopped working (revoked, or the account is gone). */
  onUnauthorized(error: ApiError): void;
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function buildUrl(path: string, query?: RequestOptions['query']): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {}))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** A client bound to one API key. */
export function createApiClient(apiKey: string, hooks: ClientHooks): ApiClient {
  async function raw(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {
      ...options.headers,
      'x-api-key': apiKey,
      [STUDIO_CLIENT_HEADER]: STUDIO_CLIENT,
      accept: 'application/json, application/pdf',
    };
    const multipart = options.body instanceof FormData;
    // The browser writes the multipart content-type itself (with the boundary).
    if (options.body !== undefined && !multipart) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(buildUrl(path, options.query), {
        method,
        headers,
        body:
          options.body === undefined
            ? undefined
            : multipart
              ? (options.body as FormData)
              : JSON.stringify(options.body),
        signal: options.signal,
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new ApiError(0, { message: `The server could not be reached (${(error as Error).message}).` });
    }
    const rateLimit = readRateLimit((name) => response.headers.get(name));
    if (rateLimit) hooks.onRateLimit(rateLimit);
    if (response.ok) return response;
    const retryAfter = Number(response.headers.get('retry-after'));
    const error = new ApiError(
      response.status,
      await readBody(response),
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    );
    if (response.status === 401) hooks.onUnauthorized(error);
    throw error;
  }

  return {
    raw,
    async json<T>(method: string, path: string, options?: RequestOptions): Promise<T> {
      const response = await raw(method, path, options);
      return (await readBody(response)) as T;
    },
  };
}
