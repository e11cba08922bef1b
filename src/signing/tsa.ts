/**
 * The time-stamp authority of a B-T signature, reached through the outbound guard like every customer
 * URL (net/): the URL is checked (public, https unless PRESSROOM_ALLOW_PRIVATE_NETWORKS), and the
 * connection goes through the guarded dispatcher, which resolves the name, refuses private addresses
 * and pins the socket to the address it checked. libpdf's HttpTimestampAuthority builds the RFC 3161
 * request and reads the answer; we give it our fetch (guarded, no redirects, the answer capped in
 * bytes and the whole exchange in time) and check that the token it returns is about our digest.
 * Anything wrong — down, slow, an HTTP error, garbage, a token for another digest — is TSA_FAILED:
 * the document fails and is refunded; it is never signed without the time-stamp asked for.
 */
import { HttpTimestampAuthority, type DigestAlgorithm, type TimestampAuthority } from '@libpdf/core';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import { checkUrl } from '../net/check-url.js';
import { findOutboundBlockedError } from '../net/outbound-blocked-error.js';
import { AppError, ValidationError } from '../shared/errors.js';
import { TSA_MAX_RESPONSE_BYTES, TSA_TIMEOUT_MS } from './signing-bounds.js';

export interface TsaPolicy {
  /** The guarded dispatcher every TSA connection goes through. */
  dispatcher: Dispatcher;
  allowPrivateNetworks: boolean;
  /** The exchange's deadline. @defaultValue TSA_TIMEOUT_MS */
  timeoutMs?: number;
}

/** Checks a TSA URL without touching the network; a 422 at `loc` when it is refused. */
export function checkTsaUrl(
  url: string,
  policy: Pick<TsaPolicy, 'allowPrivateNetworks'>,
  loc: (string | number)[],
): URL {
  const checked = checkUrl(url, { allowPrivateNetworks: policy.allowPrivateNetworks, requireHttps: true });
  if (!checked.ok)
    throw new ValidationError([{ loc, msg: `The time-stamp authority URL ${checked.message}`, type: 'url_refused' }]);
  return checked.url;
}

function tsaFailed(host: string, why: string, cause?: unknown): AppError {
  return new AppError(
    'TSA_FAILED',
    `The time-stamp authority at ${host} did not time-stamp the signature (${why}); nothing was charged. Retry, or sign without timestamp.`,
    { cause },
  );
}

/** A fetch for libpdf: guarded, no redirects, the body read up to a cap. `failed` hears its own errors (libpdf keeps only their message). */
function guardedFetch(policy: TsaPolicy, failed: (error: unknown) => void): typeof globalThis.fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await undiciFetch(String(input), {
      ...(init as object),
      redirect: 'manual',
      dispatcher: policy.dispatcher,
    } as Parameters<typeof undiciFetch>[1]).catch((error: unknown) => {
      failed(error);
      throw error;
    });
    const declared = Number(response.headers.get('content-length') ?? 0);
    if (declared > TSA_MAX_RESPONSE_BYTES)
      throw new Error(`answer of ${declared} bytes, more than ${TSA_MAX_RESPONSE_BYTES}`);
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of response.body ?? []) {
      size += chunk.length;
      if (size > TSA_MAX_RESPONSE_BYTES) throw new Error(`answer longer than ${TSA_MAX_RESPONSE_BYTES} bytes`);
      chunks.push(chunk);
    }
    return new Response(Buffer.concat(chunks), { status: response.status, statusText: response.statusText });
  }) as typeof globalThis.fetch;
}

/** A TimestampAuthority for libpdf that reaches `url` through the guard and fails with TSA_FAILED. */
export function guardedTimestampAuthority(url: URL, policy: TsaPolicy): TimestampAuthority {
  const timeoutMs = policy.timeoutMs ?? TSA_TIMEOUT_MS;
  let fetchError: unknown;
  const inner = new HttpTimestampAuthority(url.href, {
    timeout: timeoutMs,
    fetch: guardedFetch(policy, (error) => (fetchError = error)),
  });
  return {
    async timestamp(digest: Uint8Array, algorithm: DigestAlgorithm): Promise<Uint8Array> {
      let timer: NodeJS.Timeout | undefined;
      // libpdf's own timeout covers the headers only; this one covers the whole exchange.
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        const token = await Promise.race([inner.timestamp(digest, algorithm), deadline]);
        // The token's TSTInfo carries the imprint it stamped: a token for other bytes is no time-stamp of ours.
        if (!Buffer.from(token).includes(Buffer.from(digest))) throw new Error('the token is not for the digest sent');
        return token;
      } catch (error) {
        if (error instanceof AppError) throw error;
        const blocked = findOutboundBlockedError(fetchError) ?? findOutboundBlockedError(error);
        const why = blocked ? 'its address is not allowed' : error instanceof Error ? error.message : String(error);
        throw tsaFailed(url.host, why, error);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
