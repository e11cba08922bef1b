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
import { imagePixelSize, MAX_IMAGE_PIXELS, MAX_IMAGE_WIDTH, MIN_IMAGE_WIDTH, type ImageFormat } from '../rendering/image-renderer.js';
import { checkModifications, imageUrlsOf, layerEdits, type LayerModification, type LoadedImage } from '../templates/layers/layer-modifications.js';
import type { Template } from '../templates/templates.js';
import { AppError, ValidationError } from '../shared/errors.js';
import { expandDottedKeys } from './data-binding.js';

/** What an image request asks for, besides the delivery. */
export interface ImageOptions {
  format: ImageFormat;
  /** Pixel width; null → the template's canvas width (kept within MIN/MAX_IMAGE_WIDTH). */
  width: number | null;
  /** 1–100, jpeg and webp. */
  quality: number;
  modifications: LayerModification[];
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

/** Refuses what can be refused before a charge: a PDF template, a bad colour, too many pixels. */
export function checkImageRequest(template: Template, image: ImageOptions): void {
  if (template.kind !== 'image' || !template.canvas) {
    throw new AppError(
      'INVALID_REQUEST',
      `Template ${template.id} is a pdf template; render it with POST /v1/pdf/create, or make it an image template (PUT /v1/templates/${template.id} with kind "image" and a canvas).`,
    );
  }
  checkModifications(image.modifications);
  const size = imagePixelSize(template.canvas, outputWidth(template, image));
  if (size.width * size.height > MAX_IMAGE_PIXELS) {
    throw new ValidationError([{
      loc: ['body', 'width'],
      msg: `would make a ${size.width} × ${size.height} image; at most ${MAX_IMAGE_PIXELS} pixels are rendered (the height follows the template's ${template.canvas.width} × ${template.canvas.height} canvas). Ask for a smaller width`,
      type: 'value_error',
    }]);
  }
}

/** The pixel width: as asked, or the canvas width kept within the bounds a request could ask for. */
function outputWidth(template: Template, image: ImageOptions): number {
  return image.width ?? Math.min(MAX_IMAGE_WIDTH, Math.max(MIN_IMAGE_WIDTH, template.canvas!.width));
}

/** Renders a checked image request (see the file comment). */
export async function renderImageDocument(
  deps: { renderer: PdfRenderer; loadImages: ImageLoader },
  request: { accountId: string; template: Template; data: Record<string, unknown>; image: ImageOptions; signal?: AbortSignal },
): Promise<RenderedImage> {
  const { template, image } = request;
  const urls = imageUrlsOf(image.modifications);
  const images = urls.length > 0 ? await deps.loadImages(urls, request.signal) : new Map<string, LoadedImage>();
  const rendered = await deps.renderer.renderImage({
    template: { html: template.html, css: template.css, strict: template.strict },
    data: expandDottedKeys(request.data),
    canvas: template.canvas!,
    output: { format: image.format, width: outputWidth(template, image), quality: image.quality },
    ...(image.modifications.length > 0 ? { layers: layerEdits(image.modifications, images) } : {}),
    signal: request.signal,
    accountId: request.accountId,
  });
  const layerWarnings = rendered.layerWarnings.map((message): DocumentWarning => ({ code: 'IMAGE_MODIFICATION', message }));
  return { bytes: rendered.image, contentType: rendered.contentType, warnings: [...layerWarnings, ...rendered.warnings] };
}
