/**
 * Pressroom's additions to nunjucks' Jinja2 dialect, installed into each document's environment:
 * the filters, tests and globals listed as `pressroom` in `../catalogue.ts` (a test checks that the
 * two agree), and the warnings evaluation raises. A strict template (the template's `strict`
 * setting, a runtime input of the document) turns the problems of the data — an undefined variable,
 * a text where a number or a date belongs — into errors (TEMPLATE_RENDER_ERROR) instead.
 */
import type { DocumentHelpers } from './document-helpers.js';
import type { EvaluationWarning } from './document-result.js';
import { installHelperFilters, type Report } from './helper-filters.js';
import type { Nunjucks, NunjucksEnvironment } from './nunjucks-types.js';
import { installJinja2Additions } from './jinja2-additions.js';
import { printfFormat } from './printf-format.js';

export interface InstalledLanguage extends Report {
  /** A strict template (its `strict` setting): problems of the data are errors, not warnings. */
  setStrict(strict: boolean): void;
  /** Which part (`main`, `header`, `footer`, `css`) the next warnings belong to. */
  startPart(part: string): void;
  /** Warnings raised so far, each one once. */
  warnings(): EvaluationWarning[];
}

/**
 * The global every output of a variable prints through (`../compiler.ts`, UNDEFINED_CHECK): an
 * undefined value is reported with the variable's name and position, and printed as nothing.
 */
const UNDEFINED_CHECK = '__pressroom_check_defined';

/** At most this many warnings per document: a loop over bad rows says so once per row at most. */
const MAX_WARNINGS = 50;
const PART_NAMES: Record<string, string> = {
  main: 'the HTML',
  header: 'the header',
  footer: 'the footer',
  css: 'the CSS',
};

/** The URL of the account's asset `name` (the closed room serves it to that account's documents only). */
function assetUrl(name: unknown): string {
  return `https://assets.pressroom.internal/a/${String(name).split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * Installs the language into `env`. A document's second environment (the css one) passes the first
 * one's `InstalledLanguage`, so both report into the same warnings.
 */
export function installLanguage(
  nj: Nunjucks,
  env: NunjucksEnvironment,
  helpers: DocumentHelpers,
  shared?: InstalledLanguage,
): InstalledLanguage {
  const language = shared ?? collectWarnings();
  env.addFilter('format', printfFormat);
  installJinja2Additions(nj, env);
  installHelperFilters(nj, env, helpers, language);
  env.addGlobal('asset', assetUrl);
  env.addGlobal(UNDEFINED_CHECK, (value: unknown, name: string, lineno: number, colno: number) => {
    if (value !== undefined) return value;
    language.invalid('UNDEFINED_VARIABLE', {
      warning: `"${name}" is not in the data (line ${lineno + 1}, column ${colno + 1}); printed as nothing`,
      error: `"${name}" is not in the data, and this template is strict (send it, or print it with a default: {{ ${name} | default("") }})`,
    });
    return '';
  });
  return language;
}

function collectWarnings(): InstalledLanguage {
  const warnings: EvaluationWarning[] = [];
  const seen = new Set<string>();
  const makeError = Error;
  let part = 'main';
  let strict = false;
  const language: InstalledLanguage = {
    setStrict(value) {
      strict = value;
    },
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
    invalid(code, texts) {
      // Thrown inside the compiled template, which adds the position of the expression.
      if (strict) throw new makeError(texts.error);
      language.warn(code, texts.warning);
    },
    warnings: () => warnings.slice(),
  };
  return language;
}
