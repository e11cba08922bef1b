/**
 * What changed between two states of a template (two versions, or a version and the draft): a line
 * diff per part — HTML, CSS, header, footer, page setup and sample data. Pure, no DOM.
 */
import type { PageSetup } from './api-types.js';
import { diffLines, hasChanges, type DiffLine } from './line-diff.js';

/** The parts of a template that decide what prints. */
export interface TemplateSnapshot {
  html: string;
  css: string | null;
  page: PageSetup | null;
  sample_data: Record<string, unknown> | null;
  /** Strict mode (shown with the page setup); absent = false. */
  strict?: boolean;
}

export type DiffPart = 'html' | 'css' | 'header_html' | 'footer_html' | 'page' | 'sample_data';

export interface PartDiff {
  part: DiffPart;
  label: string;
  lines: DiffLine[];
  added: number;
  removed: number;
}

/** Page setup as lines, with the renderer's defaults filled in so "not set" and "A4" compare equal. */
export function pageSetupLines(page: PageSetup | null): string {
  const p = page ?? {};
  const paper = p.width !== undefined ? `size: ${p.width} x ${p.height ?? ''}` : `format: ${p.format ?? 'A4'}`;
  const lines = [paper, `orientation: ${p.orientation ?? 'portrait'}`];
  if (p.tagged === false) lines.push('tagged: false');
  if (p.pdf_ua === true) lines.push('pdf_ua: true');
  for (const side of ['top', 'right', 'bottom', 'left'] as const) {
    const value = p.margin?.[side];
    if (value) lines.push(`margin ${side}: ${value}`);
  }
  return lines.join('\n');
}

const PARTS: { part: DiffPart; label: string; text(s: TemplateSnapshot): string }[] = [
  { part: 'html', label: 'HTML', text: (s) => s.html },
  { part: 'css', label: 'CSS', text: (s) => s.css ?? '' },
  { part: 'header_html', label: 'Header', text: (s) => s.page?.header_html ?? '' },
  { part: 'footer_html', label: 'Footer', text: (s) => s.page?.footer_html ?? '' },
  { part: 'page', label: 'Page setup', text: (s) => pageSetupLines(s.page) + (s.strict ? '\nstrict mode: on' : '') },
  { part: 'sample_data', label: 'Sample data', text: (s) => JSON.stringify(s.sample_data ?? {}, null, 2) },
];

/** The parts that differ, in a fixed order; an empty list means the two print the same template. */
export function diffTemplates(from: TemplateSnapshot, to: TemplateSnapshot): PartDiff[] {
  return PARTS.flatMap(({ part, label, text }) => {
    const lines = diffLines(text(from), text(to));
    if (!hasChanges(lines)) return [];
    return [
      {
        part,
        label,
        lines,
        added: lines.filter((l) => l.op === 'added').length,
        removed: lines.filter((l) => l.op === 'removed').length,
      },
    ];
  });
}
