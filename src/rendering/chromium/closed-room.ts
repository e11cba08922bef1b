/**
 * Request interception for one page: the first wall of the closed room (the proxy sinkhole in
 * `network-sinkhole.ts` is the second). Every request the page — its frames and its dedicated
 * workers — makes is paused by the CDP Fetch domain and decided here:
 *   - our own fake-origin documents (`https://*.invalid/`) are fulfilled from memory;
 *   - `https://assets.pressroom.internal/…` goes to the optional asset resolver;
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
export type AssetResolver = (url: string) => Buffer | AssetResponse | undefined | Promise<Buffer | AssetResponse | undefined>;

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

/** Asset responses may be read by our documents, whose origin differs (RENDER_ORIGIN). */
const ASSET_HEADERS = { 'Access-Control-Allow-Origin': '*' };

/** Interception state of one page session. */
export class ClosedRoom {
  readonly #documents = new Map<string, { doc: ServedDocument; once: boolean }>();

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
      await this.#fulfil(requestId, Buffer.from(served.doc.html, 'utf8'), 'text/html; charset=utf-8', served.doc.headers);
      return;
    }
    if (request.url.startsWith('data:') || request.url.startsWith('blob:')) {
      await this.session.send('Fetch.continueRequest', { requestId });
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
    await this.#fulfil(requestId, asset.body, asset.contentType ?? CONTENT_TYPES[extension] ?? 'application/octet-stream', ASSET_HEADERS);
  }

  async #fulfil(requestId: string, body: Buffer, contentType: string, headers: Record<string, string> = {}): Promise<void> {
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
