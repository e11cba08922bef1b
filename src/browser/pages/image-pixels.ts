/**
 * The decoded size of a loaded document's images, measured before it is printed
 * (PRESSROOM_MAX_IMAGE_PIXELS): a few kB of PNG can declare 20,000 × 20,000 pixels, and printing
 * decodes every pixel (1.6 GB for that one).
 *
 * What is counted: every distinct image the document has loaded, in every frame the page's session
 * sees — `<img>`, `<picture>`, SVG `<image>`, `<input type=image>`, `<video poster>`, CSS
 * backgrounds, borders, masks, list markers and `content:`, images a script added — as Chromium
 * lists them (`Page.getResourceTree`, resources of type Image; an image the layout does not use is
 * not loaded, so not listed). Each is loaded once more, from the memory cache, into an `Image` in an
 * isolated world of the page (the page's own scripts cannot see or change it; on the print page
 * they are off anyway), and its natural width × height is what Chromium's own decoder reports. An
 * image used many times counts once: it is decoded once.
 *
 * The reused print page replaces its document with `Page.setDocumentContent`, which keeps the
 * document's resource list: images of earlier documents stay on it until they are collected. So an
 * image of the main frame that was on the previous document's list too counts only if the current
 * document refers to it (an element's source, or the text of its style sheets and style
 * attributes, open shadow roots included); a new one always counts. No document is ever charged
 * with another's images.
 *
 * What is not seen: images inside an SVG that is itself used as an image, canvases, whatever
 * rasterises without being an image (filters, huge blurred boxes), images loaded only by print-media
 * CSS (they load while printing), and an image the previous document on the page also had that the
 * current one uses only from a closed shadow root. The byte and memory bounds cover those.
 */
import type { CDPSession, Protocol } from 'puppeteer-core';
import { raceSignal, pageFunction } from '../cdp-helpers.js';

const WORLD_NAME = 'pressroom-image-pixels';

/**
 * Measures the documents of one page. Its isolated world outlives a document replaced with
 * `Page.setDocumentContent` (document.open keeps the window), so the reused print page creates it
 * once: a document without images costs one DevTools round trip, one with images two.
 */
export class ImagePixelMeter {
  #contextId: number | undefined;
  /** The main frame's image list of the previous document, by `urlKey`. */
  #previous = new Set<string>();

  constructor(
    private readonly session: CDPSession,
    private readonly frameId: string,
  ) {}

  /**
   * Decoded pixels of the images the current document loaded, in the page and its frames, and the
   * images Chromium could not decode (they count 0 and print as broken images).
   */
  async measure(signal: AbortSignal): Promise<ImageMeasure> {
    const { frameTree } = await raceSignal(this.session.send('Page.getResourceTree'), signal);
    const main = imageUrls([frameTree], false);
    const previous = this.#previous;
    this.#previous = new Set(main.map(urlKey));
    // Frames other than the main one are new documents each time: nothing of an earlier one is listed.
    const input: MeasureInput = {
      count: imageUrls(frameTree.childFrames ?? [], true),
      check: [],
      hideBroken: hasFailedImage(frameTree),
    };
    for (const url of main) (previous.has(urlKey(url)) ? input.check : input.count).push(url);
    if (input.count.length === 0 && input.check.length === 0 && !input.hideBroken) return { pixels: 0, undecoded: [] };
    if (this.#contextId !== undefined) {
      try {
        return await this.#sum(this.#contextId, input, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        // The world went with its document (a navigation): make a new one below.
      }
    }
    const world = await raceSignal(
      this.session.send('Page.createIsolatedWorld', {
        frameId: this.frameId,
        worldName: WORLD_NAME,
        grantUniveralAccess: true,
      }),
      signal,
    );
    this.#contextId = world.executionContextId;
    return this.#sum(world.executionContextId, input, signal);
  }

  async #sum(executionContextId: number, input: MeasureInput, signal: AbortSignal): Promise<ImageMeasure> {
    const { result, exceptionDetails } = await raceSignal(
      this.session.send('Runtime.callFunctionOn', {
        executionContextId,
        functionDeclaration: BROWSER_FUNCTION,
        arguments: [{ value: input }],
        awaitPromise: true,
        returnByValue: true,
      }),
      signal,
    );
    if (exceptionDetails)
      throw new Error(
        `measuring the document's images failed: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`,
      );
    const value = result.value as MeasureResult;
    // Positions, not URLs, come back: a data: URL may be megabytes long.
    const urls = [...input.count, ...input.check];
    return {
      pixels: Number(value.pixels),
      undecoded: value.undecoded.map((i) => urls[i]).filter((url): url is string => url !== undefined),
    };
  }
}

/** What `measure` found. */
export interface ImageMeasure {
  pixels: number;
  /** URLs of loaded images Chromium could not decode: damaged, or past its own limit of 2^29 pixels. */
  undecoded: string[];
}

/** What the page answers: the pixel sum, and the positions in `[...count, ...check]` of the images that did not decode. */
interface MeasureResult {
  pixels: number;
  undecoded: number[];
}

/** What the page measures: `count` always, `check` only where the document refers to it. */
interface MeasureInput {
  count: string[];
  check: string[];
  /** An image of the page failed to load: its elements are hidden (broken ones are hidden anyway after an undecoded one). */
  hideBroken: boolean;
}

/** Identifies a URL without keeping all of a data: URL; two URLs that share a key are only checked more. */
function urlKey(url: string): string {
  return `${url.length}:${url.slice(0, 96)}:${url.slice(-96)}`;
}

/** Whether the main frame lists an image that failed to load (blocked, missing, timed out). */
function hasFailedImage(frame: Protocol.Page.FrameResourceTree): boolean {
  return frame.resources.some(
    (resource) => resource.type === 'Image' && (resource.failed === true || resource.canceled === true),
  );
}

/** The distinct image URLs of `frames` (and, with `deep`, of their frames). */
function imageUrls(frames: Protocol.Page.FrameResourceTree[], deep: boolean): string[] {
  const urls = new Set<string>();
  const stack = [...frames];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    for (const resource of frame.resources) {
      if (resource.type === 'Image' && !resource.failed && !resource.canceled) urls.add(resource.url);
    }
    if (deep) stack.push(...(frame.childFrames ?? []));
  }
  return [...urls];
}

/** The little of the DOM `sumNaturalPixels` uses (this project compiles without the DOM library). */
interface BrowserImage {
  readonly complete: boolean;
  readonly currentSrc: string;
  readonly style: { setProperty(name: string, value: string, priority: string): void };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  src: string;
  readonly naturalWidth: number;
  readonly naturalHeight: number;
}
interface BrowserElement {
  readonly shadowRoot: BrowserRoot | null;
  readonly currentSrc?: string;
  readonly style: { readonly cssText: string };
  hasAttribute(name: string): boolean;
  getAttribute(name: string): string | null;
}
interface BrowserSheet {
  readonly cssRules: ArrayLike<{ readonly cssText: string; readonly styleSheet?: BrowserSheet | null }>;
}
interface BrowserRoot {
  querySelectorAll(selector: string): ArrayLike<BrowserElement>;
  readonly styleSheets: ArrayLike<BrowserSheet>;
  readonly adoptedStyleSheets?: ArrayLike<BrowserSheet>;
}
interface BrowserGlobals {
  Image: new () => BrowserImage;
  URL: typeof URL;
  document: BrowserRoot & { readonly baseURI: string; readonly images: ArrayLike<BrowserImage> };
}

/**
 * Runs in the page's isolated world, not here. Keeps the `check` URLs the document refers to, then
 * loads every URL into an `Image` (from the memory cache; only the image's header is decoded for its
 * size) and returns the sum of width × height. An image that does not load counts 0 (it will not be
 * printed either) and its position is returned: it loaded, so Chromium could not decode it — a
 * damaged file, or one past Blink's own limit of 2^29 pixels (a 900-megapixel PNG), which prints as
 * a broken image (issue 37). Last, an `<img>` of the document that has no picture (blocked, missing,
 * undecodable) is made `visibility: hidden`: it keeps its box and prints nothing, where Chromium would
 * draw its broken-image icon into the PDF (issue 42).
 */
export function sumNaturalPixels(input: MeasureInput): Promise<MeasureResult> {
  const g = globalThis as unknown as BrowserGlobals;
  const hideBroken = (): void => {
    for (const image of Array.from(g.document.images)) {
      if (image.complete && image.currentSrc && image.naturalWidth === 0)
        image.style.setProperty('visibility', 'hidden', 'important');
    }
  };
  const urls: [string, number][] = input.count.map((url, i) => [url, i]);
  if (input.check.length > 0) {
    const sources = new Set<string>();
    let css = '';
    const readSheet = (sheet: BrowserSheet): void => {
      try {
        for (const rule of Array.from(sheet.cssRules)) {
          css += rule.cssText;
          if (rule.styleSheet) readSheet(rule.styleSheet);
        }
      } catch {
        // A sheet the world may not read: its images are not checked.
      }
    };
    const roots: BrowserRoot[] = [g.document];
    for (let i = 0; i < roots.length; i++) {
      const root = roots[i]!;
      for (const element of Array.from(root.querySelectorAll('*'))) {
        if (element.shadowRoot) roots.push(element.shadowRoot);
        if (element.hasAttribute('style')) css += element.style.cssText;
        if (element.currentSrc) sources.add(element.currentSrc);
        for (const name of ['href', 'xlink:href', 'src', 'poster', 'data']) {
          const value = element.getAttribute(name);
          if (!value) continue;
          try {
            sources.add(new g.URL(value, g.document.baseURI).href);
          } catch {
            // Not a URL.
          }
        }
      }
      for (const sheet of [...Array.from(root.styleSheets), ...Array.from(root.adoptedStyleSheets ?? [])])
        readSheet(sheet);
    }
    input.check.forEach((url, i) => {
      if (sources.has(url) || css.includes(url)) urls.push([url, input.count.length + i]);
    });
  }
  const undecoded: number[] = [];
  return Promise.all(
    urls.map(
      ([url, position]) =>
        new Promise<number>((resolve) => {
          const image = new g.Image();
          image.onload = () => resolve(image.naturalWidth * image.naturalHeight);
          image.onerror = () => {
            undecoded.push(position);
            resolve(0);
          };
          image.src = url;
        }),
    ),
  ).then((sizes) => {
    if (input.hideBroken || undecoded.length > 0) hideBroken();
    return { pixels: sizes.reduce((sum, size) => sum + size, 0), undecoded };
  });
}

/** `sumNaturalPixels` as the source sent to the page. */
const BROWSER_FUNCTION = pageFunction(sumNaturalPixels);
