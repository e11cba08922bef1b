/**
 * The decoded size of a loaded document's images, measured before it is printed
 * (PRESSROOM_MAX_IMAGE_PIXELS): a few kB of PNG can declare 20,000 × 20,000 pixels, and printing
 * decodes every pixel (1.6 GB for that one).
 *
 * What is counted: every distinct image the page has loaded, in every frame the page's session
 * sees — `<img>`, `<picture>`, SVG `<image>`, `<input type=image>`, `<video poster>`, CSS
 * backgrounds, borders, masks, list markers and `content:` — as Chromium lists them
 * (`Page.getResourceTree`, resources of type Image; an image the layout does not use is not loaded,
 * so not listed). Each is loaded once more, from the memory cache, into an `Image` in an isolated
 * world of the page (the page's own scripts cannot see or change it; on the print page they are off
 * anyway), and its natural width × height is what Chromium's own decoder reports. An image used
 * many times counts once: it is decoded once.
 * What is not: images inside an SVG that is itself used as an image, canvases, and whatever
 * rasterises without being an image (filters, huge blurred boxes). The byte and memory bounds cover those.
 */
import type { CDPSession, Protocol } from 'puppeteer-core';
import { raceSignal } from './cdp-helpers.js';

const WORLD_NAME = 'pressroom-image-pixels';

/** Decoded pixels of the images loaded in the page `frameId` and its frames. */
export async function measureImagePixels(session: CDPSession, frameId: string, signal: AbortSignal): Promise<number> {
  const { frameTree } = await raceSignal(session.send('Page.getResourceTree'), signal);
  const urls = [...imageUrls(frameTree)];
  if (urls.length === 0) return 0;
  const { executionContextId } = await raceSignal(session.send('Page.createIsolatedWorld', { frameId, worldName: WORLD_NAME }), signal);
  const { result, exceptionDetails } = await raceSignal(
    session.send('Runtime.callFunctionOn', {
      executionContextId,
      functionDeclaration: BROWSER_FUNCTION,
      arguments: [{ value: urls }],
      awaitPromise: true,
      returnByValue: true,
    }),
    signal,
  );
  if (exceptionDetails) throw new Error(`measuring the document's images failed: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
  return Number(result.value);
}

function* imageUrls(tree: Protocol.Page.FrameResourceTree): Generator<string> {
  const seen = new Set<string>();
  const stack = [tree];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    for (const resource of frame.resources) {
      if (resource.type !== 'Image' || resource.failed || resource.canceled || seen.has(resource.url)) continue;
      seen.add(resource.url);
      yield resource.url;
    }
    stack.push(...(frame.childFrames ?? []));
  }
}

/** The little of the DOM `sumNaturalPixels` uses (this project compiles without the DOM library). */
interface BrowserImage {
  onload: (() => void) | null;
  onerror: (() => void) | null;
  src: string;
  readonly naturalWidth: number;
  readonly naturalHeight: number;
}

/**
 * Runs in the page's isolated world, not here: loads each URL into an `Image` (from the memory
 * cache; only the image's header is decoded for its size) and returns the sum of width × height.
 * An image that does not load counts 0 (it will not be printed either).
 */
export function sumNaturalPixels(urls: string[]): Promise<number> {
  const ImageConstructor = (globalThis as unknown as { Image: new () => BrowserImage }).Image;
  return Promise.all(
    urls.map(
      (url) =>
        new Promise<number>((resolve) => {
          const image = new ImageConstructor();
          image.onload = () => resolve(image.naturalWidth * image.naturalHeight);
          image.onerror = () => resolve(0);
          image.src = url;
        }),
    ),
  ).then((sizes) => sizes.reduce((sum, size) => sum + size, 0));
}

/**
 * `sumNaturalPixels` as the source sent to the page. tsx compiles with esbuild's keepNames, which
 * may wrap inner functions in a `__name(…)` helper the page does not have: a no-op one is provided.
 */
const BROWSER_FUNCTION = `function (urls) { const __name = (f) => f; return (${sumNaturalPixels.toString()})(urls); }`;
