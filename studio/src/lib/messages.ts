/**
 * The service's messages in the studio's words. The API speaks to programs ("GET /v1/assets lists
 * them", "enum at page_rotations.2: Input should be '0', '90', …", a path in the repository's docs);
 * the studio says where to look on its own screens, names places as its screens name them (a file, a
 * page, a field of the form, rows counted from 1) and keeps the service's code only as a reference.
 * Pure, no DOM.
 */
import type { ValidationIssue } from './api-types.js';
import type { DocumentWarning } from './warnings.js';

/** A message, and where on the studio to act on it. */
export interface Said {
  text: string;
  /** A studio screen (path) that helps: the Assets screen for a missing asset. */
  link?: { href: string; label: string };
}

/** The studio's screens a message may point to (kept here so this module needs no router). */
export const SCREENS = { assets: '/assets' } as const;

/** API and repository phrases, and what a studio user reads instead. */
const REWRITES: [RegExp, string][] = [
  // The list of filters and tests: the editor shows it next to such a problem (problems.ts).
  [/;? ?the list is in docs\/templates\.md\.?/g, ''],
  [/;? ?GET \/v1\/assets lists them\.?/g, '; the Assets screen lists the names you have.'],
  [/;? ?GET \/v1\/templates\/[^/\s]+\/versions lists them\.?/g, '; the Versions panel lists them.'],
  [
    /;? ?upload it with POST \/v1\/certificates or list yours with GET \/v1\/certificates\.?/g,
    '; the Certificates screen lists yours.',
  ],
  [/Field required by the template/g, 'required by the template, and empty'],
];

/** A message of the service with its API and repository phrases put in the studio's words. */
export function inStudioWords(message: string): string {
  return REWRITES.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), message)
    .replace(/;\s*;/g, ';')
    .trim();
}

/** "Input should be '0', '90', '180' or '270'" → "must be 0, 90, 180 or 270". */
function issueMessage(issue: ValidationIssue): string {
  const choices = /^Input should be (.+)$/.exec(issue.msg);
  if (issue.type === 'enum' && choices) return `must be ${choices[1]!.replace(/'/g, '')}`;
  return inStudioWords(issue.msg);
}

/** Codes of the API's own refusals worth keeping as a reference (not the generic schema ones). */
const GENERIC_TYPES =
  /^(missing|value_error|enum|type_error|extra_forbidden|string_|int_|float_|bool_|greater_|less_|too_|literal_|dict_|list_|json_)/;

/** Names the place a 422 item is about (its `loc` without `body`); null: the generic path. */
export type PlaceNamer = (loc: readonly (string | number)[]) => string | null;

/** `pdfs.1.pdf_base64` → "pdfs row 2 › pdf_base64": rows counted from 1, never a 0-based index. */
export function genericPlace(loc: readonly (string | number)[]): string {
  return loc
    .map((part) => (typeof part === 'number' ? `row ${part + 1}` : part))
    .join(' › ')
    .replace(/ › row/g, ' row');
}

/** One 422 item for a person: "Page 2: the angle must be 0, 90, 180 or 270". */
export function describeIssue(issue: ValidationIssue, place: PlaceNamer = () => null): string {
  const loc = issue.loc[0] === 'body' ? issue.loc.slice(1) : issue.loc;
  const where = loc.length ? (place(loc) ?? genericPlace(loc)) : '';
  const code = typeof issue.type === 'string' && !GENERIC_TYPES.test(issue.type) ? ` (${issue.type})` : '';
  return `${where ? `${where}: ` : ''}${issueMessage(issue)}${code}`;
}

/** A document warning for a person; an asset the account lacks points to the Assets screen. */
export function describeWarning(
  warning: DocumentWarning,
  fieldLabel: (key: string) => string | undefined = () => undefined,
): Said & { url?: string } {
  if (warning.code === 'ASSET_NOT_FOUND') {
    const name = /asset named "([^"]+)"/.exec(warning.message)?.[1];
    // The URL is the service's internal asset address, which means nothing outside a document.
    if (name !== undefined)
      return {
        text: `Your asset library has no “${name}” (names match exactly, capitals included).`,
        link: { href: SCREENS.assets, label: 'Open Assets' },
      };
  }
  if (warning.code === 'MISSING_REQUIRED_FIELD') {
    const key = /^"([^"]+)"/.exec(warning.message)?.[1];
    if (key !== undefined)
      return { text: `${fieldLabel(key) ?? key} is required and has no value: printed as a blank.` };
  }
  return { text: inStudioWords(warning.message), ...(warning.url ? { url: warning.url } : {}) };
}

/** "Nothing was charged (balance: 17 credits)." */
export const nothingCharged = (credits: number | null): string =>
  `Nothing was charged${credits === null ? '' : ` (balance: ${credits} ${credits === 1 ? 'credit' : 'credits'})`}.`;
