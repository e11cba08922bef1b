/**
 * What one document may load (closed-room.ts `DocumentResources`), made per render:
 *   - `https://assets.pressroom.internal/a/<name>` → the RENDER's account's asset `<name>` (each
 *     `/`-separated segment percent-encoded, as `asset()` writes it). Any other path of the asset
 *     origin, or a name the account does not have, answers nothing and warns `ASSET_NOT_FOUND`.
 *     There is no way to name another account: the account is the render's, never the URL's.
 *   - `http(s)://…` images, fonts and stylesheets → the remote fetcher (remote-fetcher.ts), within
 *     this document's bounds (count, bytes, time from its first remote request). Anything else the
 *     document asks the network for (scripts, XHR, media) is refused with a warning.
 * Every refusal or failure becomes a warning in the render's collector; nothing is dropped silently,
 * including what Chromium never asks for (issue 37): a URL with a user name or password, some
 * address literals (`[::127.0.0.1]`, `[64:ff9b::7f00:1]`), a URL that is not valid
 * (`[fe80::1%lo]`) — found in the document's markup by `review` — and an image that loaded but did
 * not decode (`undecodedImage`, from the image measure).
 */
import { ASSET_ORIGIN, type AssetResponse, type DocumentResources } from '../../browser/pages/closed-room.js';
import type { AssetPin } from '../../assets/asset-revisions.js';
import { isDocumentResourceType } from '../../assets/asset-types.js';
import type { RenderWarnings } from './render-warnings.js';
import type { RemoteResourceFetcher } from './remote-fetcher.js';
import { RemoteResourceError } from './remote-fetcher.js';

/** The account's assets, for rendering: the newest revision, or the one a version's `pin` names. */
export type AssetSource = (
  accountId: string,
  name: string,
  pin?: AssetPin | null,
) => Promise<AssetResponse | undefined>;

/** Per-document bounds on remote resources. */
export interface RemoteDocumentBounds {
  maxPerDocument: number;
  documentMaxBytes: number;
  documentTimeoutMs: number;
}

export interface DocumentResourcesOptions {
  accountId: string;
  /** A version's asset revisions (docs/assets.md#revisions); absent for the draft, which prints the newest. */
  pin?: AssetPin | null | undefined;
  warnings: RenderWarnings;
  assets?: AssetSource | undefined;
  remote?: RemoteResourceFetcher | undefined;
  bounds: RemoteDocumentBounds;
}

/** The path prefix `asset()` URLs use. */
export const ASSET_PATH_PREFIX = '/a/';

/** `asset(name)`'s URL: the asset origin, `/a/`, each segment of `name` percent-encoded. */
export function assetUrl(name: string): string {
  return `${ASSET_ORIGIN}${ASSET_PATH_PREFIX}${name.split('/').map(encodeURIComponent).join('/')}`;
}

/** The asset name an asset URL names, or undefined when it is not an `asset()` URL. */
export function assetNameOf(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.origin !== ASSET_ORIGIN) return undefined;
  // `/~<render>/a/…` is how the renderer marks one render's asset URLs (uniqueAssetUrls).
  const path = parsed.pathname.replace(/^\/~[A-Za-z0-9]+(?=\/a\/)/, '');
  if (!path.startsWith(ASSET_PATH_PREFIX)) return undefined;
  try {
    return path.slice(ASSET_PATH_PREFIX.length).split('/').map(decodeURIComponent).join('/');
  } catch {
    return undefined;
  }
}

/**
 * Gives this render's `asset()` URLs in `html` a prefix of their own (`/~<render>/a/…`). A print
 * page is reused and its documents replace each other in place, and a document keeps a "list of
 * available images" by URL (HTML spec) that no cache setting clears: without this, the next
 * document — another account's — would be handed an image the previous one loaded, by URL, without
 * a request. The account is still the render's own; the prefix only makes the URL new.
 */
export function uniqueAssetUrls(html: string, renderId: string): string {
  return html.split(`${ASSET_ORIGIN}${ASSET_PATH_PREFIX}`).join(`${ASSET_ORIGIN}/~${renderId}${ASSET_PATH_PREFIX}`);
}

/** An http(s) URL whose authority has a character Chromium may refuse it for without a request (`@`, `[`, `%`, `\`). */
const SUSPICIOUS_URL = /https?:\/\/[^\s"'<>()/?#]*[@[%\\]/i;
/** `url(…)` and `@import "…"` in CSS, in `<style>` elements and `style` attributes alike. */
const CSS_URL =
  /url\(\s*(?:&quot;|["'])?\s*(https?:\/\/[^"'()\s]*?)\s*(?:&quot;|["'])?\s*\)|@import\s+(?:url\(\s*)?["'](https?:\/\/[^"']*)["']/gi;
/** Attributes that name a resource; `href` only on the elements that load it (checked by tag). */
const RESOURCE_ATTRIBUTE = /\s(src|srcset|poster|data|href|xlink:href)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;
const HREF_LOADS = /^<(link|image|use|feimage)\b/i;
/** How long a `data:` URL may be in a warning: enough to tell two images apart, not the whole file. */
const DATA_URL_SHOWN = 96;

/** The http(s) URLs in `html` that name resources: image, media and frame sources, stylesheet links, CSS `url()` and `@import`. */
export function resourceUrls(html: string): string[] {
  const found: string[] = [];
  for (const match of html.matchAll(CSS_URL)) found.push((match[1] ?? match[2])!);
  for (const match of html.matchAll(RESOURCE_ATTRIBUTE)) {
    const name = match[1]!.toLowerCase();
    if (name.endsWith('href')) {
      const tag = html.lastIndexOf('<', match.index);
      if (tag < 0 || !HREF_LOADS.test(html.slice(tag, tag + 10))) continue;
    }
    const raw = match[2] ?? match[3] ?? match[4] ?? '';
    if (name !== 'srcset' && !/^\s*https?:\/\//i.test(raw)) continue;
    const value = raw.replace(/&amp;/g, '&');
    const values =
      name === 'srcset' ? value.split(',').map((candidate) => candidate.trim().split(/\s+/)[0] ?? '') : [value.trim()];
    found.push(...values.filter((url) => /^https?:\/\//i.test(url)));
  }
  return found;
}

/** The URL as a warning shows it: a `data:` URL shortened, a render's asset URL as `asset()` wrote it. */
function shownUrl(url: string): string {
  if (url.startsWith('data:')) return url.length > DATA_URL_SHOWN ? `${url.slice(0, DATA_URL_SHOWN)}…` : url;
  const name = assetNameOf(url);
  return name === undefined ? url : assetUrl(name);
}

/** Why `name` was not found: the account has none, or the version was published without it. */
function missingAsset(name: string, pin: AssetPin | null | undefined): string {
  if (!pin) return `This account has no asset named "${name}"; GET /v1/assets lists them.`;
  return `This version of the template was published without an asset named "${name}" (the account had none then, or the template does not name it as asset('${name}')); a version prints the asset files it was published with: publish a new version to use the current one.`;
}

/** Resource types the remote fetcher serves; the rest of the web stays closed. */
const REMOTE_TYPES = new Set(['Image', 'Font', 'Stylesheet']);

const REMOTE_OFF =
  'Remote resources are turned off on this server (PRESSROOM_REMOTE_RESOURCES=off); upload the file as an asset.';

/** `url` as the page would request it (WHATWG parsing, as Chromium's), or as written when it does not parse. */
function canonical(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

export function createDocumentResources(options: DocumentResourcesOptions): DocumentResources {
  const { accountId, warnings, bounds } = options;
  let count = 0;
  let bytes = 0;
  let documentDeadline: AbortSignal | undefined;

  async function loadAsset(url: string): Promise<AssetResponse | undefined> {
    const name = assetNameOf(url);
    const found =
      name === undefined || !options.assets ? undefined : await options.assets(accountId, name, options.pin);
    if (!found) {
      warnings.add({
        code: 'ASSET_NOT_FOUND',
        message:
          name === undefined ? 'This is not an asset URL; use {{ asset("name") }}.' : missingAsset(name, options.pin),
        url: name === undefined ? url : assetUrl(name),
      });
      return undefined;
    }
    if (found.contentType !== undefined && !isDocumentResourceType(found.contentType)) {
      warnings.add({
        code: 'RESOURCE_TYPE_REFUSED',
        message: `The asset "${name}" is a PDF: PDF assets are for watermarks; a document loads images, fonts and stylesheets.`,
        url: assetUrl(name!),
      });
      return undefined;
    }
    return found;
  }

  async function loadRemote(url: string, resourceType: string): Promise<AssetResponse | undefined> {
    const remote = options.remote;
    if (!remote?.enabled) {
      remote?.record('disabled');
      warnings.add({ code: 'RESOURCE_BLOCKED', message: REMOTE_OFF, url });
      return undefined;
    }
    if (!REMOTE_TYPES.has(resourceType)) {
      warnings.add({
        code: 'RESOURCE_BLOCKED',
        message: `Documents load only images, fonts and stylesheets from the web; this ${resourceType.toLowerCase()} request was refused.`,
        url,
      });
      return undefined;
    }
    if (count >= bounds.maxPerDocument) {
      remote.record('document_limit');
      warnings.add({
        code: 'RESOURCE_LIMIT',
        message: `A document may load at most ${bounds.maxPerDocument} remote resources.`,
        url,
      });
      return undefined;
    }
    count += 1;
    documentDeadline ??= AbortSignal.timeout(bounds.documentTimeoutMs);
    try {
      const resource = await remote.fetch(url, documentDeadline);
      if (bytes + resource.body.length > bounds.documentMaxBytes) {
        remote.record('document_limit');
        warnings.add({
          code: 'RESOURCE_LIMIT',
          message: `The document's remote resources would exceed ${bounds.documentMaxBytes} bytes, the most one document may load.`,
          url,
        });
        return undefined;
      }
      bytes += resource.body.length;
      return resource;
    } catch (error) {
      const failure =
        error instanceof RemoteResourceError
          ? error
          : new RemoteResourceError('RESOURCE_FAILED', 'The resource could not be loaded.', 'failed');
      warnings.add({ code: failure.code, message: failure.message, url });
      return undefined;
    }
  }

  return {
    load(url, resourceType) {
      return url.startsWith(`${ASSET_ORIGIN}/`) ? loadAsset(url) : loadRemote(url, resourceType);
    },
    review(html) {
      // One test for the usual document, which names no such URL.
      if (!SUSPICIOUS_URL.test(html)) return;
      const remote = options.remote;
      for (const url of resourceUrls(html)) {
        // Chromium asks for the others itself, and `load` answers. Where it does ask for one of these
        // too, `load` gives the same warning for the same URL, and one per code and URL is kept.
        if (!SUSPICIOUS_URL.test(url)) continue;
        if (!remote?.enabled) {
          warnings.add({ code: 'RESOURCE_BLOCKED', message: REMOTE_OFF, url: canonical(url) });
          continue;
        }
        const refusal = remote.refusal(url);
        if (refusal) warnings.add({ code: refusal.code, message: refusal.message, url: canonical(url) });
      }
    },
    undecodedImage(url) {
      warnings.add({
        code: 'IMAGE_NOT_DECODED',
        message:
          'The image loaded but could not be decoded — a damaged file, or more pixels than Chromium decodes at all (2^29, about 537 megapixels) — so it prints as a broken image.',
        url: shownUrl(url),
      });
    },
  };
}
