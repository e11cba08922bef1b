/**
 * What rotate is asked to do (TemplateFox's shape): `rotation` turns every page, `page_rotations`
 * (`{"3": 90}`) turns the pages it names; one of the two, never both. Angles are clockwise, 0, 90, 180
 * or 270, and add to the page's own rotation (a page at 90 turned by 270 ends at 0). Checked in two
 * steps, like page selections: the shape before any download, the page numbers once the count is known.
 */
import { ValidationError } from '../shared/errors.js';
import { PAGE_NUMBER } from '../pdf/page-selection.js';
import type { PageRotation } from '../pdf/qpdf.js';

export const ANGLES = [0, 90, 180, 270] as const;
export type Angle = (typeof ANGLES)[number];

/** A checked request: every page by one angle, or some pages each by its own. */
export type RotationPlan = { kind: 'all'; angle: Angle } | { kind: 'pages'; angles: { page: number; angle: Angle }[] };

const isAngle = (value: unknown): value is Angle => (ANGLES as readonly unknown[]).includes(value);

function refuse(loc: (string | number)[], msg: string, type: string): never {
  throw new ValidationError([{ loc: ['body', ...loc], msg, type }]);
}

/** Checks `rotation` / `page_rotations` before any download; a 422 names what is wrong. */
export function planRotation(input: {
  rotation?: number | null;
  pageRotations?: Record<string, number> | null;
}): RotationPlan {
  const { rotation, pageRotations } = input;
  const hasMap = pageRotations != null;
  if (rotation != null && hasMap)
    refuse([], 'Give either rotation (every page) or page_rotations (some pages), not both', 'rotation_conflict');
  if (rotation != null) {
    if (!isAngle(rotation))
      refuse(
        ['rotation'],
        `rotation ${rotation} is not allowed; use 0, 90, 180 or 270 (clockwise)`,
        'rotation_invalid',
      );
    return { kind: 'all', angle: rotation };
  }
  if (!hasMap)
    refuse([], 'Give rotation (0, 90, 180 or 270 for every page) or page_rotations (e.g. {"3": 90})', 'missing');
  const entries = Object.entries(pageRotations);
  if (entries.length === 0)
    refuse(['page_rotations'], 'page_rotations is empty; name at least one page, e.g. {"3": 90}', 'rotation_invalid');
  const seen = new Set<number>();
  const angles = entries.map(([key, angle]) => {
    if (!PAGE_NUMBER.test(key) || Number(key) === 0)
      refuse(
        ['page_rotations', key],
        `"${key}" is not a page number; keys are pages numbered from 1, e.g. {"3": 90}`,
        'rotation_invalid',
      );
    if (seen.has(Number(key)))
      refuse(['page_rotations', key], `page ${Number(key)} is named twice`, 'rotation_invalid');
    seen.add(Number(key));
    if (!isAngle(angle))
      refuse(
        ['page_rotations', key],
        `rotation ${String(angle)} for page ${key} is not allowed; use 0, 90, 180 or 270 (clockwise)`,
        'rotation_invalid',
      );
    return { page: Number(key), angle };
  });
  return { kind: 'pages', angles };
}

/** The plan as qpdf rotations for a document of `pageCount` pages (pages it names must be in it); 0 turns nothing. */
export function rotationsFor(plan: RotationPlan, pageCount: number): PageRotation[] {
  if (plan.kind === 'all') return plan.angle === 0 ? [] : [{ angle: plan.angle, pages: 'all' }];
  const byAngle = new Map<Exclude<Angle, 0>, number[]>();
  for (const { page, angle } of plan.angles) {
    if (page > pageCount)
      refuse(
        ['page_rotations', String(page)],
        `page ${page} is outside the document, which has ${pageCount} page${pageCount === 1 ? '' : 's'}`,
        'page_out_of_range',
      );
    if (angle === 0) continue;
    byAngle.set(angle, [...(byAngle.get(angle) ?? []), page]);
  }
  return [...byAngle].map(([angle, pages]) => ({ angle, pages: pages.sort((a, b) => a - b) }));
}
