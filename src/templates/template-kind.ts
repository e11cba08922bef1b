/**
 * A template's kind: `pdf` (the default: paper, margins, header and footer), `image` (a fixed-size
 * canvas rendered to PNG, JPEG or WebP by `POST /v1/image/create`) or `pdf_form` (a customer's fillable
 * PDF form, filled from `data`: pdf-forms/, docs/pdf-forms.md; its layout is the PDF's own). Each kind
 * has its own layout settings, and a setting of another kind is refused rather than silently kept unused.
 */
import { ValidationError, type ValidationIssue } from '../shared/errors.js';

export type TemplateKind = 'pdf' | 'image' | 'pdf_form';
export const TEMPLATE_KINDS: readonly TemplateKind[] = ['pdf', 'image', 'pdf_form'];

/** An image template's size in CSS pixels; `width` on image/create scales it (the aspect ratio stays). */
export interface Canvas {
  width: number;
  height: number;
}

/** Bounds of each canvas side, in CSS pixels. */
export const CANVAS_MIN_PX = 16;
export const CANVAS_MAX_PX = 5000;
/** The canvas of an image template created without one: a square social-media post. */
export const DEFAULT_CANVAS: Canvas = Object.freeze({ width: 1080, height: 1080 });

/** What a create or update says about kind and layout (undefined: not given). */
export interface KindInput {
  kind?: TemplateKind;
  canvas?: Canvas | null;
  page?: unknown;
}

/**
 * The kind and canvas a template ends up with, from what was given and what it had: an image template
 * keeps its canvas unless a new one is given (a new one gets DEFAULT_CANVAS); a PDF template has none.
 * Refuses (422) a canvas on a PDF template and a page setup on an image template.
 */
export function resolveKind(
  given: KindInput,
  current?: { kind: TemplateKind; canvas: Canvas | null; page: unknown },
): { kind: TemplateKind; canvas: Canvas | null } {
  const kind = given.kind ?? current?.kind ?? 'pdf';
  const issues: ValidationIssue[] = [];
  if (kind !== 'image' && given.canvas != null) {
    issues.push({
      loc: ['body', 'canvas'],
      msg: 'canvas applies to image templates only; set kind to "image", or leave canvas out',
      type: 'value_error',
    });
  }
  const page = given.page === undefined ? current?.page : given.page;
  if (kind === 'pdf_form' && page != null) {
    issues.push({
      loc: ['body', 'page'],
      msg: "page (paper, margins, header and footer) applies to pdf templates only; a pdf_form template keeps its PDF's own pages. Leave page out",
      type: 'value_error',
    });
  }
  if (kind === 'image' && page != null) {
    const loc = given.page === undefined ? ['body', 'kind'] : ['body', 'page'];
    issues.push({
      loc,
      msg: 'page (paper, margins, header and footer) applies to pdf templates only; an image template is sized by canvas. Send page: null to drop it',
      type: 'value_error',
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  if (kind !== 'image') return { kind, canvas: null };
  const canvas = given.canvas ?? (current?.kind === 'image' ? current.canvas : null) ?? DEFAULT_CANVAS;
  return { kind, canvas: { width: canvas.width, height: canvas.height } };
}
