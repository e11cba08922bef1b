/**
 * Image output (`POST /v1/image/create`): what an image request is checked for before any charge, and
 * the render step `documents.produce` runs for it. Charging, idempotency and delivery are the document
 * service's, exactly as for a PDF (documents.ts): one credit for a delivered image, none for a failure.
 *
 * The render: the layers' `image_url`s are loaded first (image-loader.ts: data: URIs, or warnings),
 * then the template is rendered in a render slot like any document, the modifications are applied to
 * its document in the page (templates/layers/layer-modifications.ts decides the edits,
 * browser/pages/layer-edits.ts makes them), and the canvas is captured.
 */
import type { DocumentWarning } from '../shared/document-warnings.js';
import type { PdfRenderer } from '../rendering/pdf-renderer.js';
import {
  imagePixelSize,
  MAX_IMAGE_PIXELS,
  MAX_IMAGE_WIDTH,
  MIN_IMAGE_WIDTH,
  type ImageFormat,
} from '../rendering/image-renderer.js';
import {
  checkModifications,
  imageUrlsOf,
  layerEdits,
  type LayerModification,
  type LoadedImage,
} from '../templates/layers/layer-modifications.js';
import type { Template } from '../templates/templates.js';
import { ValidationError } from '../shared/errors.js';
import { paperSizeInches } from '../rendering/page-size.js';
import { expandDottedKeys } from './data-binding.js';

/** What an image request asks for, besides the delivery. */
export interface ImageOptions {
  format: ImageFormat;
  /** Pixel width; null → the template's canvas width (kept within MIN/MAX_IMAGE_WIDTH). */
  width: number | null;
  /** 1–100, jpeg and webp. */
  quality: number;
  modifications: LayerModification[];
  /** A PDF template's page to picture (1 when null); an image template has none. */
  page?: number | null;
}

/** Loads every `image_url` of one request (within that request's byte and time budget). */
export type ImageLoader = (urls: string[], signal?: AbortSignal) => Promise<Map<string, LoadedImage>>;

/** The rendered image. */
export interface RenderedImage {
  bytes: Buffer;
  contentType: string;
  /** The layer modifications that could not apply (IMAGE_MODIFICATION), then the render's own (resources that did not load). */
  warnings: DocumentWarning[];
}

/** Refuses what can be refused before a charge: a bad colour, too many pixels, what a PDF template's page cannot do. */
export function checkImageRequest(template: Template, image: ImageOptions): void {
  if (isPageImage(template)) return checkPageImageRequest(template, image);
  if (image.page != null) {
    throw new ValidationError([
      {
        loc: ['body', 'page'],
        msg: 'applies to PDF templates; an image template has one canvas, leave page out',
        type: 'value_error',
      },
    ]);
  }
  const canvas = template.canvas!;
  checkModifications(image.modifications);
  const size = imagePixelSize(canvas, outputWidth(template, image));
  if (size.width * size.height > MAX_IMAGE_PIXELS) {
    throw new ValidationError([
      {
        loc: ['body', 'width'],
        msg: `would make a ${size.width} × ${size.height} image; at most ${MAX_IMAGE_PIXELS} pixels are rendered (the height follows the template's ${canvas.width} × ${canvas.height} canvas). Ask for a smaller width`,
        type: 'value_error',
      },
    ]);
  }
}

/** The pixel width: as asked, or the canvas width kept within the bounds a request could ask for. */
function outputWidth(template: Template, image: ImageOptions): number {
  return image.width ?? Math.min(MAX_IMAGE_WIDTH, Math.max(MIN_IMAGE_WIDTH, template.canvas!.width));
}

/** An image request on a PDF template pictures one page of the printed document (issue 42). */
export function isPageImage(template: Template): boolean {
  return template.kind !== 'image' || !template.canvas;
}

/**
 * A page is a picture of what was printed: pdftoppm writes PNG and JPEG only. It has no layers, so its
 * modifications are skipped with a warning each (`pageImageWarnings`), as TemplateFox skips names no
 * layer has (issue 50).
 */
function checkPageImageRequest(template: Template, image: ImageOptions): void {
  if (image.format === 'webp') {
    throw new ValidationError([
      { loc: ['body', 'format'], msg: 'a page of a pdf template is pictured as png or jpeg', type: 'value_error' },
    ]);
  }
  const paper = orientedPaper(template);
  const width = pageImageWidth(template, image);
  const height = Math.round((width * paper.height) / paper.width);
  if (width * height > MAX_IMAGE_PIXELS) {
    throw new ValidationError([
      {
        loc: ['body', 'width'],
        msg: `would make a ${width} × ${height} image of the page; at most ${MAX_IMAGE_PIXELS} pixels are rendered. Ask for a smaller width`,
        type: 'value_error',
      },
    ]);
  }
}

/** A warning per modification of a page's picture: a pdf template has no layers to apply them to. */
export function pageImageWarnings(template: Template, image: ImageOptions): DocumentWarning[] {
  return image.modifications.map((m) => ({
    code: 'IMAGE_MODIFICATION',
    message: `Layer "${m.name}" was not found: template ${template.id} is a pdf template, whose page is pictured as printed, with no layers; its modification was skipped (pass data instead).`,
  }));
}

/** The pixel width of a page's picture: as asked, or the paper's width at 96 dpi (A4: 794), within the bounds. */
export function pageImageWidth(template: Template, image: ImageOptions): number {
  return (
    image.width ?? Math.min(MAX_IMAGE_WIDTH, Math.max(MIN_IMAGE_WIDTH, Math.round(orientedPaper(template).width * 96)))
  );
}

/** The template's paper in inches as printed (CSS `@page` in its HTML may still say otherwise: the page's own shape is kept). */
function orientedPaper(template: Template): { width: number; height: number } {
  const paper = paperSizeInches(template.page);
  return template.page?.orientation === 'landscape' ? { width: paper.height, height: paper.width } : paper;
}

/** Renders a checked image request (see the file comment). */
export async function renderImageDocument(
  deps: { renderer: PdfRenderer; loadImages: ImageLoader },
  request: {
    accountId: string;
    template: Template;
    data: Record<string, unknown>;
    image: ImageOptions;
    signal?: AbortSignal;
  },
): Promise<RenderedImage> {
  const { template, image } = request;
  const urls = imageUrlsOf(image.modifications);
  const images = urls.length > 0 ? await deps.loadImages(urls, request.signal) : new Map<string, LoadedImage>();
  const rendered = await deps.renderer.renderImage({
    template: { html: template.html, css: template.css, strict: template.strict, assets: template.version?.assets },
    data: expandDottedKeys(request.data),
    canvas: template.canvas!,
    output: { format: image.format, width: outputWidth(template, image), quality: image.quality },
    ...(image.modifications.length > 0 ? { layers: layerEdits(image.modifications, images) } : {}),
    signal: request.signal,
    accountId: request.accountId,
  });
  const layerWarnings = rendered.layerWarnings.map(
    (message): DocumentWarning => ({ code: 'IMAGE_MODIFICATION', message }),
  );
  return {
    bytes: rendered.image,
    contentType: rendered.contentType,
    warnings: [...layerWarnings, ...rendered.warnings],
  };
}
