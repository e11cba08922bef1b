/**
 * Request interception for one page: the first wall of the closed room (the proxy sinkhole in
 * `network-sinkhole.ts` is the second). Every request the page — its frames and its dedicated
 * workers — makes is paused by the CDP Fetch domain and decided here:
 *   - our own fake-origin documents (`https://*.invalid/`) are fulfilled from memory;
 *   - while a document is loaded, its `DocumentResources` (set per document by the page printing
 *     it) answer the asset origin and `http(s)://` images, fonts and stylesheets: the render's own
 *     account's assets, remote files fetched by the service through the outbound guard
 *     (`rendering/resources/`). The page itself never reaches the network;
 *   - otherwise `https://assets.pressroom.internal/…` goes to the optional asset resolver;
 *   - everything else fails. Frame navigations fail as `Aborted`, which leaves the frame where it
 *     is instead of committing an error page (whose text would end up in the PDF).
 * `data:` and `blob:` URLs never reach the network and are not paused.
 */
import type { CDPSession, Protocol } from 'puppeteer-core';
import type { Logger } from '../../shared/log.js';

/** Origin of print documents. `.invalid` never resolves, and an https origin keeps file:// out. */
export const RENDER_ORIGIN = 'https://render.pressroom.invalid';
/** Origin of the template evaluator; a different site, so Chromium gives it its own process. */
export const EVALUATOR_ORIGIN = 'https://evaluator.pressroom-sandbox.invalid';
/** The one origin templates may load from, when an asset resolver is configured. */
export const ASSET_ORIGIN = 'https://assets.pressroom.internal';

/** What an asset resolver returns for a URL it knows. */
export interface AssetResponse {
  body: Buffer;
  contentType?: string;
}

/** Looks up `https://assets.pressroom.internal/…` URLs; `undefined` answers 404. */
export type AssetResolver = (
  url: string,
) => Buffer | AssetResponse | undefined | Promise<Buffer | AssetResponse | undefined>;

/**
 * What one document may load besides data: and blob: URLs (issue 13). Set on the page's closed room
 * while that document is loaded and printed, then cleared, so a reused page never answers one
 * document's requests with another's resources.
 */
export interface DocumentResources {
  /**
   * Answers a request of the document for `url` (the asset origin, or any `http:`/`https:` URL
   * outside our own fake origins); `undefined` refuses it. It records its own warnings.
   */
  load(url: string, resourceType: string, signal?: AbortSignal): Promise<AssetResponse | undefined>;
  /**
   * Called with the document's HTML before it is loaded: warns about the resource URLs in it that can
   * never load by their form (a user name or password, a private address literal, not a valid URL).
   * Chromium refuses some of those itself, without asking `load`, so they would pass unseen.
   */
  review?(html: string): void;
  /** An image the document loaded that Chromium could not decode: it prints as a broken image. */
  undecodedImage?(url: string): void;
}

/** A document served from memory at one of our fake origins. */
export interface ServedDocument {
  html: string;
  headers?: Record<string, string>;
}

export interface ClosedRoomOptions {
  assetResolver?: AssetResolver | undefined;
  logger: Logger;
  /** Called for every refused request (for metrics). */
  onBlocked?: () => void;
}

const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  css: 'text/css',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
};

/**
 * Asset responses may be read by our documents, whose origin differs (RENDER_ORIGIN). `no-store`:
 * print pages are reused, and Chromium's memory cache would otherwise hand the next document — of
 * another account, perhaps — a resource by URL without asking the closed room again.
 */
const ASSET_HEADERS = { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-store' };

/** Interception state of one page session. */
export class ClosedRoom {
  readonly #documents = new Map<string, { doc: ServedDocument; once: boolean }>();
  /** The resources of the document loaded now (see DocumentResources); none between documents. */
  resources: DocumentResources | undefined;

  constructor(
    private readonly session: CDPSession,
    private readonly options: ClosedRoomOptions,
  ) {}

  /** Starts intercepting every request of the page (frames and dedicated workers). */
  async enable(): Promise<void> {
    this.session.on('Fetch.requestPaused', (event) => {
      this.#decide(event).catch((error: unknown) => {
        this.options.logger.debug({ err: error }, 'request interception: could not answer a paused request');
      });
    });
    await this.session.send('Fetch.enable', { patterns: [{ urlPattern: '*' }] });
  }

  /** Serves `doc` for top-level navigations to `url`; `once` forgets it after the first request. */
  serve(url: string, doc: ServedDocument, once = false): void {
    this.#documents.set(url, { doc, once });
  }

  async #decide(event: Protocol.Fetch.RequestPausedEvent): Promise<void> {
    const { requestId, request, resourceType } = event;
    const served = resourceType === 'Document' ? this.#documents.get(request.url) : undefined;
    if (served) {
      if (served.once) this.#documents.delete(request.url);
      await this.#fulfil(
        requestId,
        Buffer.from(served.doc.html, 'utf8'),
        'text/html; charset=utf-8',
        served.doc.headers,
      );
      return;
    }
    if (request.url.startsWith('data:') || request.url.startsWith('blob:')) {
      await this.session.send('Fetch.continueRequest', { requestId });
      return;
    }
    const resources = this.resources;
    // A resolver configured for the whole renderer (engine tests) keeps the asset origin's other paths.
    const resolverPath =
      this.options.assetResolver !== undefined &&
      request.url.startsWith(`${ASSET_ORIGIN}/`) &&
      !/^https:\/\/assets\.pressroom\.internal\/(~[A-Za-z0-9]+\/)?a\//.test(request.url);
    if (
      resources &&
      !resolverPath &&
      request.method === 'GET' &&
      resourceType !== 'Document' &&
      isDocumentResourceUrl(request.url)
    ) {
      await this.#load(resources, requestId, request.url, resourceType);
      return;
    }
    if (this.options.assetResolver && request.url.startsWith(`${ASSET_ORIGIN}/`) && request.method === 'GET') {
      await this.#resolveAsset(requestId, request.url);
      return;
    }
    this.options.onBlocked?.();
    this.options.logger.debug({ url: request.url.slice(0, 200), resourceType }, 'closed room: request refused');
    await this.session.send('Fetch.failRequest', {
      requestId,
      errorReason: resourceType === 'Document' ? 'Aborted' : 'BlockedByClient',
    });
  }

  async #resolveAsset(requestId: string, url: string): Promise<void> {
    let found: Buffer | AssetResponse | undefined;
    try {
      found = await this.options.assetResolver!(url);
    } catch (error) {
      this.options.logger.warn({ err: error, url: url.slice(0, 200) }, 'asset resolver failed');
    }
    if (found === undefined) {
      await this.session.send('Fetch.fulfillRequest', { requestId, responseCode: 404, body: '' });
      return;
    }
    const asset = Buffer.isBuffer(found) ? { body: found } : found;
    const extension = new URL(url).pathname.split('.').pop()?.toLowerCase() ?? '';
    // Fonts are fetched in CORS mode, and the asset origin is not the document's: without this
    // header Chromium drops every @font-face from it silently (images and stylesheets load anyway).
    await this.#fulfil(
      requestId,
      asset.body,
      asset.contentType ?? CONTENT_TYPES[extension] ?? 'application/octet-stream',
      ASSET_HEADERS,
    );
  }

  async #load(resources: DocumentResources, requestId: string, url: string, resourceType: string): Promise<void> {
    let found: AssetResponse | undefined;
    try {
      found = await resources.load(url, resourceType);
    } catch (error) {
      this.options.logger.warn({ err: error, url: url.slice(0, 200) }, 'document resource failed');
    }
    if (found === undefined) {
      this.options.onBlocked?.();
      await this.session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' });
      return;
    }
    await this.#fulfil(requestId, found.body, found.contentType ?? 'application/octet-stream', ASSET_HEADERS);
  }

  async #fulfil(
    requestId: string,
    body: Buffer,
    contentType: string,
    headers: Record<string, string> = {},
  ): Promise<void> {
    const responseHeaders = [{ name: 'Content-Type', value: contentType }];
    for (const [name, value] of Object.entries(headers)) responseHeaders.push({ name, value });
    await this.session.send('Fetch.fulfillRequest', {
      requestId,
      responseCode: 200,
      responseHeaders,
      body: body.toString('base64'),
    });
  }
}

/** The asset origin, or an http(s) URL that is not one of our own fake `.invalid` origins. */
function isDocumentResourceUrl(url: string): boolean {
  if (url.startsWith(`${ASSET_ORIGIN}/`)) return true;
  if (!url.startsWith('https://') && !url.startsWith('http://')) return false;
  try {
    return !new URL(url).hostname.endsWith('.invalid');
  } catch {
    return false;
  }
}
