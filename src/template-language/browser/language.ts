/**
 * Pressroom's additions to nunjucks' Jinja2 dialect, installed into each document's environment:
 * the filters, tests and globals listed as `pressroom` in `../catalogue.ts` (a test checks that the
 * two agree), and the warnings evaluation raises.
 */
import type { EvaluationWarning } from './document-result.js';
import type { Nunjucks, NunjucksEnvironment } from './nunjucks-types.js';
import { installJinja2Additions } from './jinja2-additions.js';
import { printfFormat } from './printf-format.js';

export interface InstalledLanguage {
  /** Which part (`main`, `header`, `footer`, `css`) the next warnings belong to. */
  startPart(part: string): void;
  /** Warnings raised so far, each one once. */
  warnings(): EvaluationWarning[];
}

/** The URL of the account's asset `name` (the closed room serves it to that account's documents only). */
function assetUrl(name: unknown): string {
  return `https://assets.pressroom.internal/a/${String(name).split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * Installs the language into `env`. A document's second environment (the css one) passes the first
 * one's `InstalledLanguage`, so both report into the same warnings.
 */
export function installLanguage(nj: Nunjucks, env: NunjucksEnvironment, shared?: InstalledLanguage): InstalledLanguage {
  env.addFilter('format', printfFormat);
  installJinja2Additions(nj, env);
  env.addGlobal('asset', assetUrl);
  if (shared) return shared;
  const warnings: EvaluationWarning[] = [];
  return {
    startPart() {},
    warnings: () => warnings.slice(),
  };
}
