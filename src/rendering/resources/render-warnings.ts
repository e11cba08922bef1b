/**
 * The warnings of one render (issue 13): one collector per render, filled by whatever notices
 * something — the closed room's resources here, template evaluation — and handed back with the
 * result. The same warning (code and URL) is kept once; past MAX_WARNINGS one last entry says how
 * many more there were, so a document with a thousand broken images cannot flood an answer.
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
    this.#list.push({ code: warning.code, message: redactUrlSecrets(warning.message), ...(url === undefined ? {} : { url }) });
  }

  /** The warnings so far (a copy), with a last `MORE_WARNINGS` entry when some were left out. */
  list(): DocumentWarning[] {
    if (this.#dropped === 0) return [...this.#list];
    return [...this.#list, { code: 'MORE_WARNINGS', message: `${this.#dropped} more warnings were left out.` }];
  }
}
