/**
 * Remote images, fonts and stylesheets for documents (issue 13), fetched in Node — never by the page —
 * through the outbound guard (src/net):
 *   - every hop's URL is checked before any connection (`checkUrl`: scheme, no credentials, no
 *     literal private address, no `localhost`), then dialled through a guarded dispatcher that
 *     resolves the name once, refuses it if ANY address is loopback/private/link-local/metadata and
 *     connects to the checked address (pinned);
 *   - redirects are followed by hand, each new URL checked again the same way;
 *   - documents never reach private networks, whatever PRESSROOM_ALLOW_PRIVATE_NETWORKS says (that
 *     setting is for customer webhooks and S3 endpoints). Only hosts the operator names in
 *     PRESSROOM_REMOTE_RESOURCES (`on,host[:port],…`) are dialled without that check.
 * Bounds per resource: bytes, time (redirects included), type (images, fonts, CSS: taken from the
 * bytes, CSS from its declared type). The per-document bounds are `document-resources.ts`'s; all of
 * them are fixed in remote-bounds.ts.
 *
 * One cache per process, shared by all documents, bounded in bytes (least recently used goes).
 * Policy (a shared cache in the sense of RFC 9111): `no-store`, `no-cache` and `private` responses
 * are not kept; `s-maxage`, else `max-age`, gives the lifetime; a response with neither is kept for
 * DEFAULT_FRESHNESS_MS (a heuristic, as shared caches use). Nothing is revalidated: an expired entry
 * is fetched again. Concurrent requests for one URL share one fetch.
 */
import { request, type Dispatcher } from 'undici';
import { ByteBudgetCache } from '../../assets/byte-budget-cache.js';
import { isDocumentResourceType, sniffAssetType } from '../../assets/asset-types.js';
import { checkUrl } from '../../net/check-url.js';
import { readCapped } from '../../net/read-capped.js';
import { createGuardedDispatcher } from '../../net/guarded-dispatcher.js';
import { findOutboundBlockedError } from '../../net/outbound-blocked-error.js';
import type { Logger } from '../../shared/log.js';
import { redactUrlSecrets } from '../../shared/redact-url.js';
import { raceSignal } from '../../browser/cdp-helpers.js';

/** How one resource request ended (the `outcome` label of pressroom_remote_resources_total). */
export type RemoteOutcome =
  | 'fetched'
  | 'cached'
  | 'blocked'
  | 'failed'
  | 'timeout'
  | 'too_large'
  | 'wrong_type'
  | 'disabled'
  | 'document_limit';

/** Warning codes of resources that did not load. */
export type RemoteWarningCode =
  | 'RESOURCE_BLOCKED'
  | 'RESOURCE_FAILED'
  | 'RESOURCE_TIMEOUT'
  | 'RESOURCE_TOO_LARGE'
  | 'RESOURCE_TYPE_REFUSED';

/** A resource that did not load; `message` is safe to show the customer (no resolved address). */
export class RemoteResourceError extends Error {
  override readonly name = 'RemoteResourceError';
  constructor(
    readonly code: RemoteWarningCode,
    message: string,
    readonly outcome: RemoteOutcome,
  ) {
    super(message);
  }
}

export interface RemoteFetcherOptions {
  enabled: boolean;
  /** Operator-named `host` / `host:port` entries that may be on private addresses. */
  hosts: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  cacheBytes: number;
  /** Redirects followed, each target checked again. @defaultValue 5 */
  maxRedirects?: number;
  logger: Logger;
  onOutcome?: (outcome: RemoteOutcome) => void;
}

export interface RemoteResource {
  body: Buffer;
  contentType: string;
}

export interface RemoteResourceFetcher {
  readonly enabled: boolean;
  /** The resource at `url`, from the cache or fetched; throws RemoteResourceError. Records its outcome. */
  fetch(url: string, signal?: AbortSignal): Promise<RemoteResource>;
  /** Counts an outcome decided by the caller (per-document limits, remote fetching off). */
  record(outcome: RemoteOutcome): void;
  /** Why `url` would be refused before any connection (not valid, credentials, a private address literal), or undefined. */
  refusal(url: string): RemoteResourceError | undefined;
  close(): Promise<void>;
}

/** Lifetime of a cached response that states none. */
export const DEFAULT_FRESHNESS_MS = 5 * 60_000;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ACCEPT =
  'image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,font/woff2,font/*;q=0.8,text/css;q=0.7,*/*;q=0.1';

interface CachedResource extends RemoteResource {
  expiresAt: number;
}

/** Milliseconds a response may be reused, or 0 when it must not be stored. */
export function cacheLifetimeMs(cacheControl: string | undefined): number {
  if (!cacheControl) return DEFAULT_FRESHNESS_MS;
  const directives = new Map<string, string | undefined>();
  for (const part of cacheControl.toLowerCase().split(',')) {
    const [key, value] = part.trim().split('=', 2) as [string, string | undefined];
    if (key) directives.set(key, value?.replace(/^"|"$/g, ''));
  }
  if (directives.has('no-store') || directives.has('no-cache') || directives.has('private')) return 0;
  const age = directives.get('s-maxage') ?? directives.get('max-age');
  if (age === undefined) return DEFAULT_FRESHNESS_MS;
  const seconds = Number(age);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
}

function defaultPort(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}

export function createRemoteResourceFetcher(options: RemoteFetcherOptions): RemoteResourceFetcher {
  const named = new Set(options.hosts.map((h) => h.toLowerCase()));
  // Documents never get the private-network exception webhooks have in development.
  const publicOnly = createGuardedDispatcher(
    { allowPrivateNetworks: false },
    { connectTimeoutMs: options.timeoutMs, headersTimeoutMs: options.timeoutMs, bodyTimeoutMs: options.timeoutMs },
  );
  // Only for hosts the operator named: the name is trusted wherever it resolves.
  const operatorNamed = createGuardedDispatcher(
    { allowPrivateNetworks: true },
    { connectTimeoutMs: options.timeoutMs, headersTimeoutMs: options.timeoutMs, bodyTimeoutMs: options.timeoutMs },
  );
  const cache = new ByteBudgetCache<CachedResource>(options.cacheBytes);
  const inFlight = new Map<string, Promise<RemoteResource>>();
  const record = (outcome: RemoteOutcome) => options.onOutcome?.(outcome);

  function isNamed(url: URL): boolean {
    const host = url.hostname.toLowerCase();
    return named.has(host) || named.has(`${host}:${defaultPort(url)}`);
  }

  /** The dispatcher for one hop, after checking its URL; throws RemoteResourceError when refused. */
  function dispatcherFor(current: string): { url: URL; dispatcher: Dispatcher } {
    let parsed: URL;
    try {
      parsed = new URL(current);
    } catch {
      throw new RemoteResourceError('RESOURCE_FAILED', 'The URL is not valid.', 'failed');
    }
    if (isNamed(parsed)) {
      const checked = checkUrl(current, { allowPrivateNetworks: true, requireHttps: false });
      if (!checked.ok) throw new RemoteResourceError('RESOURCE_BLOCKED', `The URL ${checked.message}.`, 'blocked');
      return { url: checked.url, dispatcher: operatorNamed };
    }
    const checked = checkUrl(current, { allowPrivateNetworks: false, requireHttps: false });
    if (!checked.ok) {
      const message =
        checked.reason === 'private-address'
          ? 'Documents may not load resources from private, loopback or link-local addresses (an operator can name internal hosts in PRESSROOM_REMOTE_RESOURCES).'
          : `The URL ${checked.message}.`;
      throw new RemoteResourceError('RESOURCE_BLOCKED', message, 'blocked');
    }
    return { url: checked.url, dispatcher: publicOnly };
  }

  async function download(url: string): Promise<CachedResource> {
    const deadline = AbortSignal.timeout(options.timeoutMs);
    let current = url;
    try {
      for (let hop = 0; ; hop += 1) {
        const { url: target, dispatcher } = dispatcherFor(current);
        // request() never follows redirects itself: every hop comes back here to be checked.
        const response = await request(target, {
          method: 'GET',
          dispatcher,
          signal: deadline,
          headers: { accept: ACCEPT, 'user-agent': 'Pressroom (document renderer)' },
        });
        if (REDIRECTS.has(response.statusCode)) {
          await response.body.dump().catch(() => {});
          const location = response.headers.location;
          if (typeof location !== 'string')
            throw new RemoteResourceError(
              'RESOURCE_FAILED',
              `A redirect (HTTP ${response.statusCode}) without a Location.`,
              'failed',
            );
          if (hop >= (options.maxRedirects ?? 5))
            throw new RemoteResourceError('RESOURCE_FAILED', 'Too many redirects.', 'failed');
          current = new URL(location, target).href;
          continue;
        }
        if (response.statusCode < 200 || response.statusCode > 299) {
          await response.body.dump().catch(() => {});
          throw new RemoteResourceError(
            'RESOURCE_FAILED',
            `The server answered HTTP ${response.statusCode}.`,
            'failed',
          );
        }
        const body = await readCapped(
          response.body,
          response.headers['content-length'],
          options.maxBytes,
          () =>
            new RemoteResourceError(
              'RESOURCE_TOO_LARGE',
              `The file is larger than ${options.maxBytes} bytes, the most a remote resource may have.`,
              'too_large',
            ),
        );
        const declared =
          typeof response.headers['content-type'] === 'string'
            ? response.headers['content-type'].split(';')[0]!.trim().toLowerCase()
            : undefined;
        const sniffed = sniffAssetType(body);
        const contentType =
          sniffed && isDocumentResourceType(sniffed)
            ? sniffed
            : declared === 'text/css' && !sniffed
              ? 'text/css'
              : undefined;
        if (!contentType)
          throw new RemoteResourceError(
            'RESOURCE_TYPE_REFUSED',
            `Only images, fonts and stylesheets are loaded; this is ${declared ?? 'of no known type'}.`,
            'wrong_type',
          );
        const cacheControl = response.headers['cache-control'];
        const lifetime = cacheLifetimeMs(
          typeof cacheControl === 'string'
            ? cacheControl
            : Array.isArray(cacheControl)
              ? cacheControl.join(',')
              : undefined,
        );
        return { body, contentType, expiresAt: Date.now() + lifetime };
      }
    } catch (error) {
      throw classify(error, deadline, options.timeoutMs, url, options.logger);
    }
  }

  return {
    enabled: options.enabled,
    record,
    refusal(url) {
      try {
        dispatcherFor(url);
        return undefined;
      } catch (error) {
        return error as RemoteResourceError;
      }
    },
    async fetch(url, signal) {
      const cached = cache.get(url);
      if (cached && cached.expiresAt > Date.now()) {
        record('cached');
        return cached;
      }
      let shared = inFlight.get(url);
      if (!shared) {
        shared = download(url).then((resource) => {
          if (resource.expiresAt > Date.now()) cache.set(url, resource, resource.body.length);
          return resource;
        });
        inFlight.set(url, shared);
        const forget = () => inFlight.delete(url);
        shared.then(forget, forget);
      }
      try {
        const resource = await (signal ? raceSignal(shared, signal) : shared);
        record('fetched');
        return resource;
      } catch (error) {
        const failure =
          error instanceof RemoteResourceError
            ? error
            : new RemoteResourceError(
                'RESOURCE_TIMEOUT',
                'The document ran out of time for remote resources.',
                'timeout',
              );
        record(failure.outcome);
        throw failure;
      }
    },
    async close() {
      await Promise.all([publicOnly.close(), operatorNamed.close()]);
    },
  };
}

function classify(
  error: unknown,
  deadline: AbortSignal,
  timeoutMs: number,
  url: string,
  logger: Logger,
): RemoteResourceError {
  if (error instanceof RemoteResourceError) return error;
  const blocked = findOutboundBlockedError(error);
  if (blocked) {
    // The specific story (which address) is for the log only.
    logger.info(
      { url: redactUrlSecrets(url).slice(0, 300), reason: blocked.reason },
      'remote resource refused by the outbound guard',
    );
    return new RemoteResourceError(
      'RESOURCE_BLOCKED',
      'Documents may not load resources from private, loopback or link-local addresses (an operator can name internal hosts in PRESSROOM_REMOTE_RESOURCES).',
      'blocked',
    );
  }
  if (deadline.aborted)
    return new RemoteResourceError(
      'RESOURCE_TIMEOUT',
      `The resource did not arrive within ${timeoutMs} ms.`,
      'timeout',
    );
  const code =
    (error as { code?: unknown; cause?: { code?: unknown } } | null)?.cause?.code ??
    (error as { code?: unknown } | null)?.code;
  return new RemoteResourceError(
    'RESOURCE_FAILED',
    `The download failed${typeof code === 'string' ? ` (${code})` : ''}.`,
    'failed',
  );
}
