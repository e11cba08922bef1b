/**
 * Loads the `image_url`s of an image request into data: URIs, so the page that renders them needs no
 * network (the closed room stays closed). A `data:image/…;base64,` URL is taken as it is; an `https://`
 * URL is downloaded through the outbound guard (net/fetch-public-file.ts: public addresses only unless
 * PRESSROOM_ALLOW_PRIVATE_NETWORKS=true, every redirect checked again). One request's downloads share
 * a byte budget and a deadline (`config.images`), one after the other; an image that cannot be had
 * (refused, too large, not an image, too slow) becomes a warning and the layer keeps its own image.
 */
import type { Dispatcher } from 'undici';
import { fetchPublicFile, PublicFetchError } from '../net/fetch-public-file.js';
import type { LoadedImage } from '../templates/layers/layer-modifications.js';
import type { ImageLoader } from './image-generation.js';

/** Image types a layer may be given (what Chromium decodes in an `<img>` or a background). */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml', 'image/avif']);
const DATA_URL = /^data:(image\/(?:png|jpeg|gif|webp|svg\+xml|avif));base64,([A-Za-z0-9+/]+={0,2})$/;
/** Leading bytes of the raster formats, for servers that send no usable content type. */
const SIGNATURES: [string, (b: Buffer) => boolean][] = [
  ['image/png', (b) => b.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex'))],
  ['image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => b.subarray(0, 4).toString('latin1') === 'GIF8'],
  [
    'image/webp',
    (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  ],
];

/** Settings of the loader (config.images plus the guard). */
export interface ImageLoaderOptions {
  dispatcher: Dispatcher;
  allowPrivateNetworks: boolean;
  /** Bytes all downloads of one request may take together. */
  maxBytes: number;
  /** Time all downloads of one request may take together. */
  timeoutMs: number;
}

/** Creates the loader documents.ts uses for image requests. */
export function createImageLoader(options: ImageLoaderOptions): ImageLoader {
  return async (urls, signal) => {
    const loaded = new Map<string, LoadedImage>();
    const deadline = Date.now() + options.timeoutMs;
    let budget = options.maxBytes;
    for (const url of urls) {
      if (url.startsWith('data:')) {
        loaded.set(
          url,
          DATA_URL.test(url)
            ? { dataUri: url }
            : { error: 'a data: URL must be data:image/png|jpeg|gif|webp|svg+xml|avif;base64,…' },
        );
        continue;
      }
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0 || budget <= 0) {
        loaded.set(url, {
          error:
            remainingMs <= 0
              ? `the image downloads of this request took more than ${options.timeoutMs} ms together`
              : `the image downloads of this request exceeded ${options.maxBytes} bytes together`,
        });
        continue;
      }
      try {
        const file = await fetchPublicFile(
          url,
          {
            dispatcher: options.dispatcher,
            allowPrivateNetworks: options.allowPrivateNetworks,
            maxBytes: budget,
            timeoutMs: remainingMs,
          },
          signal,
        );
        budget -= file.body.length;
        const type = imageTypeOf(file.body, file.contentType);
        loaded.set(
          url,
          type
            ? { dataUri: `data:${type};base64,${file.body.toString('base64')}` }
            : { error: `it is not an image (content type ${file.contentType ?? 'missing'})` },
        );
      } catch (error) {
        if (!(error instanceof PublicFetchError)) throw error;
        loaded.set(url, { error: error.message });
      }
    }
    return loaded;
  };
}

/** The declared type when it is an image type we take, else what the leading bytes say. */
function imageTypeOf(body: Buffer, declared: string | undefined): string | undefined {
  if (declared && IMAGE_TYPES.has(declared)) return declared;
  return SIGNATURES.find(([, matches]) => matches(body))?.[0];
}
