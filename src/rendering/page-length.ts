/**
 * What a page setup length (a template's `page.margin.*`) is: `0`, or a number with one of the CSS
 * absolute units below. This is the one definition: the template schema checks saved margins
 * against `PAGE_LENGTH_PATTERN`, the print parameters convert them with `pageLengthInches`, and the
 * studio checks and explains them from the same table — so a margin that saves also prints (a `pc`
 * margin once saved fine and then failed every generation, because the renderer knew no `pc`).
 * No imports: the studio bundles this file as it is.
 */

/** How many of each unit make an inch (CSS: 1in = 96px = 2.54cm = 25.4mm = 72pt = 6pc). */
export const PAGE_LENGTH_UNITS_PER_INCH = { px: 96, in: 1, cm: 2.54, mm: 25.4, pt: 72, pc: 6 } as const;

/** A unit a page length may use. */
export type PageLengthUnit = keyof typeof PAGE_LENGTH_UNITS_PER_INCH;

/** The units, in table order. */
export const PAGE_LENGTH_UNITS = Object.keys(PAGE_LENGTH_UNITS_PER_INCH) as PageLengthUnit[];

/** The rule as JSON Schema `pattern` / RegExp source: `0`, or a number with a unit (`20mm`, `1.5in`). */
export const PAGE_LENGTH_PATTERN = `^(0|\\d+(\\.\\d+)?(${PAGE_LENGTH_UNITS.join('|')}))$`;

/** The units for messages and help text: "px, in, cm, mm, pt or pc". */
export const PAGE_LENGTH_UNITS_TEXT = `${PAGE_LENGTH_UNITS.slice(0, -1).join(', ')} or ${PAGE_LENGTH_UNITS.at(-1)}`;

const PAGE_LENGTH = new RegExp(PAGE_LENGTH_PATTERN);

/** Whether `value` is a page length. */
export function isPageLength(value: string): boolean {
  return PAGE_LENGTH.test(value);
}

/** `value` in inches, or undefined when it is not a page length. */
export function pageLengthInches(value: string): number | undefined {
  if (!PAGE_LENGTH.test(value)) return undefined;
  if (value === '0') return 0;
  const unit = PAGE_LENGTH_UNITS.find((u) => value.endsWith(u))!;
  return Number(value.slice(0, -unit.length)) / PAGE_LENGTH_UNITS_PER_INCH[unit];
}
