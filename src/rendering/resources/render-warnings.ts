/**
 * The warnings of one render (issue 13): one collector per render, filled by whatever notices
 * something — the closed room's resources here, template evaluation — and handed back with the
 * result. The same warning (code and URL) is kept once; past MAX_WARNINGS one last entry says how
 * many more there were, so a document with a thousand broken images cannot flood an answer.
 *
 * The order is stable, so two answers for the same document compare equal: warnings without a URL
 * (template evaluation, which runs in order) first as they came, then the resource warnings by URL.
 * Resources load concurrently and finish in any order, so their arrival order means nothing.
 */
import type { DocumentWarning } from '../../shared/document-warnings.js';
import { redactUrlSecrets } from '../../shared/redact-url.js';

export const MAX_WARNINGS = 50;

export class RenderWarnings {
  readonly #list: DocumentWarning[] = [];
  readonly #seen = new Set<string>();
  #dropped = 0;

  /** Adds a warning; its URL and message are redacted of credentials. */
  add(warning: DocumentWarning): void {
    const url = warning.url === undefined ? undefined : redactUrlSecrets(warning.url).slice(0, 2000);
    const key = `${warning.code}\u0000${url ?? warning.message}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    if (this.#list.length >= MAX_WARNINGS) {
      this.#dropped += 1;
      return;
    }
    this.#list.push({
      code: warning.code,
      message: redactUrlSecrets(warning.message),
      ...(url === undefined ? {} : { url }),
    });
  }

  /** The warnings so far (a copy), with a last `MORE_WARNINGS` entry when some were left out. */
  list(): DocumentWarning[] {
    const ordered = [
      ...this.#list.filter((w) => w.url === undefined),
      ...this.#list.filter((w) => w.url !== undefined).sort(byUrlThenCode),
    ];
    if (this.#dropped === 0) return ordered;
    return [...ordered, { code: 'MORE_WARNINGS', message: `${this.#dropped} more warnings were left out.` }];
  }
}

function byUrlThenCode(a: DocumentWarning, b: DocumentWarning): number {
  const url = a.url! < b.url! ? -1 : a.url! > b.url! ? 1 : 0;
  return url !== 0 ? url : a.code < b.code ? -1 : a.code > b.code ? 1 : 0;
}
