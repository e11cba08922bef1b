/**
 * Template + data → image (PNG, JPEG or WebP). The same render as a PDF up to its last step — the fair
 * render queue, the template evaluated in the sandbox, the CSS — then a picture of the canvas instead
 * of a print (`browser/pages/capture-image.ts`), in the same closed room. `PdfRenderer.renderImage` runs
 * `captureRenderedImage` inside the render slot, under the render deadline.
 */
import type { SlotLease } from '../browser/browser-supervisor.js';
import type { CapturedImage, CaptureFormat } from '../browser/pages/capture-image.js';
import { needsScripts } from './html-assembly.js';
import type { DocumentResources } from '../browser/pages/closed-room.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import type { LayerEdits } from '../browser/pages/layer-edits.js';
import type { AssetPin } from '../assets/asset-revisions.js';

export type { LayerEdit, LayerEdits } from '../browser/pages/layer-edits.js';

export type ImageFormat = CaptureFormat;

/** Media type of each format. */
export const IMAGE_CONTENT_TYPES: Readonly<Record<ImageFormat, string>> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

/** Output width bounds in pixels (TemplateFox's). */
export const MIN_IMAGE_WIDTH = 100;
export const MAX_IMAGE_WIDTH = 4000;
/** The most pixels one image may have (a 4000 × 4000 square); a tall canvas scaled wide is refused past it. */
export const MAX_IMAGE_PIXELS = 16_000_000;

/** The encoding and size asked for. */
export interface ImageOutput {
  format: ImageFormat;
  /** Pixel width; the height follows the canvas's aspect ratio. */
  width: number;
  /** 1–100, for jpeg and webp (ignored for png). */
  quality: number;
}

/** One image to render. */
export interface ImageRenderRequest {
  /** `strict`: the template's strict mode, as for a PDF (`RenderTemplate`). */
  template: { html: string; css?: string | null; strict?: boolean; assets?: AssetPin | null };
  data: unknown;
  /** The layout size in CSS pixels. */
  canvas: { width: number; height: number };
  output: ImageOutput;
  /** Image modifications, applied in the page to the evaluated document before the picture is taken (`browser/pages/layer-edits.ts`). */
  layers?: LayerEdits;
  signal?: AbortSignal;
  /** Who asks: render slots are shared fairly between accounts. */
  accountId?: string;
}

/** The encoded image and how long the whole render took (queueing included). */
export interface ImageRenderResult {
  image: Buffer;
  contentType: string;
  renderMs: number;
  /** Resources that did not load (issue 13); empty when none. */
  warnings: DocumentWarning[];
  /** The modifications that could not apply (a layer not found, text on an `<img>`…); empty when none. */
  layerWarnings: string[];
}

/** Pixel size of `canvas` scaled to `width` pixels wide (the height rounded to whole pixels). */
export function imagePixelSize(
  canvas: { width: number; height: number },
  width: number,
): { width: number; height: number } {
  return { width, height: Math.max(1, Math.round((canvas.height * width) / canvas.width)) };
}

/** The last step of an image render, inside its slot: the document loaded, modified in the page, and its picture. */
export function captureRenderedImage(
  lease: SlotLease,
  req: ImageRenderRequest,
  document: { html: string; signal: AbortSignal; resources?: DocumentResources },
): Promise<CapturedImage> {
  const { html, signal, resources } = document;
  return lease.captureImage(
    html,
    {
      format: req.output.format,
      quality: req.output.quality,
      viewport: { width: req.canvas.width, height: req.canvas.height },
      scale: req.output.width / req.canvas.width,
      scripts: needsScripts(html),
      ...(resources ? { resources } : {}),
      ...(req.layers ? { layers: req.layers } : {}),
    },
    signal,
  );
}
