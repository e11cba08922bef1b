/**
 * Downloads a customer-supplied URL (an image layer's `image_url`) through the outbound guard: every
 * connection is resolved, checked and pinned by the guarded dispatcher, every redirect target is
 * checked again (`checkUrl`) before it is followed, and the whole download has a size cap and a time
 * limit. Only `https:` is accepted, plus `http:` when private networks are allowed (development and
 * tests, as for webhooks).
 *
 * Failures are `PublicFetchError`s whose message is safe to show the customer: they name the URL's
 * problem, never an address our resolver found.
 */
import { request, type Dispatcher } from 'undici';
import { checkUrl } from './check-url.js';
import { readCapped } from './read-capped.js';
import { findOutboundBlockedError, OUTBOUND_BLOCKED_MESSAGE } from './outbound-blocked-error.js';

/** Limits of one download. */
export interface PublicFetchOptions {
  /** The guarded dispatcher (`createGuardedDispatcher`): the connection-time half of the guard. */
  readonly dispatcher: Dispatcher;
  /** Lets URLs name private, loopback and link-local addresses, and plain http (config). */
  readonly allowPrivateNetworks: boolean;
  /** Largest body accepted, in bytes. */
  readonly maxBytes: number;
  /** Deadline of the whole download, redirects included. */
  readonly timeoutMs: number;
  /** Redirects followed, each target checked again. @defaultValue 3 */
  readonly maxRedirects?: number;
  /** The `Accept` header sent. @defaultValue 'image/*' */
  readonly accept?: string;
}

/** A downloaded body and its declared media type (lower case, without parameters). */
export interface PublicFile {
  body: Buffer;
  contentType: string | undefined;
}

/** A download that did not succeed; `message` is safe to show the customer. */
export class PublicFetchError extends Error {
  override readonly name = 'PublicFetchError';
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** GETs `url` within the options' limits; throws PublicFetchError. */
export async function fetchPublicFile(
  url: string,
  options: PublicFetchOptions,
  signal?: AbortSignal,
): Promise<PublicFile> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const all = signal ? AbortSignal.any([signal, deadline]) : deadline;
  let current = url;
  try {
    for (let hop = 0; ; hop += 1) {
      const checked = checkUrl(current, { allowPrivateNetworks: options.allowPrivateNetworks, requireHttps: true });
      if (!checked.ok) throw new PublicFetchError(`the URL ${checked.message}`);
      // undici's request() never follows redirects itself: each hop comes back here to be checked.
      const response = await request(checked.url, {
        method: 'GET',
        dispatcher: options.dispatcher,
        signal: all,
        headers: { accept: options.accept ?? 'image/*' },
      });
      if (REDIRECTS.has(response.statusCode)) {
        await response.body.dump().catch(() => {});
        const location = response.headers.location;
        if (typeof location !== 'string' || hop >= (options.maxRedirects ?? 3)) {
          throw new PublicFetchError(
            typeof location === 'string'
              ? 'too many redirects'
              : `a redirect (HTTP ${response.statusCode}) without a Location`,
          );
        }
        current = new URL(location, checked.url).href;
        continue;
      }
      if (response.statusCode < 200 || response.statusCode > 299) {
        await response.body.dump().catch(() => {});
        throw new PublicFetchError(`the server answered HTTP ${response.statusCode}`);
      }
      const body = await readCapped(
        response.body,
        response.headers['content-length'],
        options.maxBytes,
        () => new PublicFetchError(`the file is larger than ${options.maxBytes} bytes`),
      );
      const type = response.headers['content-type'];
      return { body, contentType: typeof type === 'string' ? type.split(';')[0]!.trim().toLowerCase() : undefined };
    }
  } catch (error) {
    throw asPublicFetchError(error, deadline, options.timeoutMs);
  }
}

function asPublicFetchError(error: unknown, deadline: AbortSignal, timeoutMs: number): PublicFetchError {
  if (error instanceof PublicFetchError) return error;
  if (findOutboundBlockedError(error)) return new PublicFetchError(OUTBOUND_BLOCKED_MESSAGE);
  if (deadline.aborted) return new PublicFetchError(`the download did not finish within ${timeoutMs} ms`);
  const code =
    (error as { code?: unknown; cause?: { code?: unknown } } | null)?.cause?.code ??
    (error as { code?: unknown } | null)?.code;
  return new PublicFetchError(`the download failed${typeof code === 'string' ? ` (${code})` : ''}`);
}
