/**
 * Pressroom's additions to nunjucks' Jinja2 dialect, installed into each document's environment:
 * the filters, tests and globals listed as `pressroom` in `../catalogue.ts` (a test checks that the
 * two agree), and the warnings evaluation raises.
 */
import type { DocumentHelpers } from './document-helpers.js';
import type { EvaluationWarning } from './document-result.js';
import { installHelperFilters } from './helper-filters.js';
import type { Nunjucks, NunjucksEnvironment } from './nunjucks-types.js';
import { installJinja2Additions } from './jinja2-additions.js';
import { printfFormat } from './printf-format.js';

export interface InstalledLanguage {
  /** Which part (`main`, `header`, `footer`, `css`) the next warnings belong to. */
  startPart(part: string): void;
  /** Raises a warning of the part being evaluated (each distinct one is kept once). */
  warn(code: string, message: string): void;
  /** Warnings raised so far, each one once. */
  warnings(): EvaluationWarning[];
}

/** At most this many warnings per document: a loop over bad rows says so once per row at most. */
const MAX_WARNINGS = 50;
const PART_NAMES: Record<string, string> = { main: 'the HTML', header: 'the header', footer: 'the footer', css: 'the CSS' };

/** The URL of the account's asset `name` (the closed room serves it to that account's documents only). */
function assetUrl(name: unknown): string {
  return `https://assets.pressroom.internal/a/${String(name).split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * Installs the language into `env`. A document's second environment (the css one) passes the first
 * one's `InstalledLanguage`, so both report into the same warnings.
 */
export function installLanguage(nj: Nunjucks, env: NunjucksEnvironment, helpers: DocumentHelpers, shared?: InstalledLanguage): InstalledLanguage {
  const language = shared ?? collectWarnings();
  env.addFilter('format', printfFormat);
  installJinja2Additions(nj, env);
  installHelperFilters(nj, env, helpers, (code, message) => language.warn(code, message));
  env.addGlobal('asset', assetUrl);
  return language;
}

function collectWarnings(): InstalledLanguage {
  const warnings: EvaluationWarning[] = [];
  const seen = new Set<string>();
  let part = 'main';
  return {
    startPart(name) {
      part = name;
    },
    warn(code, message) {
      const text = `${message} (in ${PART_NAMES[part] ?? part})`;
      const key = `${code}\n${text}`;
      if (seen.has(key) || warnings.length >= MAX_WARNINGS) return;
      seen.add(key);
      warnings.push({ code, message: text });
    },
    warnings: () => warnings.slice(),
  };
}
