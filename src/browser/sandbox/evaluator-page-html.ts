/**
 * The evaluator page's HTML, built once per process (`evaluator-page.ts` explains the design). Its code
 * is the template language's browser bundles (`src/template-language/browser/`, see
 * `template-language/browser-code.ts`) plus the vendored nunjucks-slim and SES: SES, `lockdown-entry`,
 * then the document runtime and nunjucks as source text the harness evaluates in each document's
 * Compartment, the constants the harness reads (`browser/sandbox-globals.d.ts`) and the harness itself.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { browserCode } from '../../template-language/browser-code.js';

const require = createRequire(import.meta.url);

/** Compiled templates each evaluator page keeps (see SentTemplates in `evaluator-page.ts`). */
export const PAGE_TEMPLATE_CACHE_SIZE = 32;

/**
 * nunjucks-slim 3.2.4 made fit for a locked-down realm, as an expression whose value is the nunjucks
 * object (no global is written):
 *  - SafeString's `valueOf`/`toString` are assigned onto an object inheriting from String.prototype;
 *    once that is frozen, assignment fails ("override mistake"), so they are defined instead.
 *  - SES refuses any source containing an HTML comment token (`striptags` has one in a regular
 *    expression); `\u0021` and `\u002d` mean the same characters there.
 * Each patch must apply: a different nunjucks build fails here, loudly, not in a template.
 */
function nunjucksForCompartments(slim: string): string {
  const patches: [string, string][] = [
    [
      's.prototype.valueOf=function(){return this.val},s.prototype.toString=function(){return this.val}',
      'Object.defineProperties(s.prototype,{valueOf:{value:function(){return this.val},writable:!0,configurable:!0},toString:{value:function(){return this.val},writable:!0,configurable:!0}})',
    ],
    ['<!--[\\s\\S]*?-->', '<\\u0021--[\\s\\S]*?-\\u002d>'],
  ];
  let patched = slim;
  for (const [from, to] of patches) {
    if (!patched.includes(from))
      throw new Error(`nunjucks-slim is not the build the evaluator was written for (missing: ${from.slice(0, 40)})`);
    patched = patched.replace(from, to);
  }
  if (/<!--|-->/.test(patched)) throw new Error('nunjucks-slim still holds an HTML comment token');
  return `(function (module, exports) {\n${patched}\n;return module.exports;\n})({ exports: {} }, {})`;
}

let cachedPage: string | undefined;

/** The evaluator page, built once per process. */
export function evaluatorPageHtml(): string {
  if (cachedPage !== undefined) return cachedPage;
  const slim = readFileSync(require.resolve('nunjucks/browser/nunjucks-slim.min.js'), 'utf8')
    // A trailing `//# sourceMappingURL` comment would swallow the code appended after it.
    .replace(/\/\/# sourceMappingURL=\S*\s*$/, '');
  // `<` escaped so no `</script>` inside the sources can end the inline script early.
  const literal = (source: string) => JSON.stringify(source).replace(/</g, '\\u003c');
  const script: string[] = [];
  {
    const ses = readFileSync(join(dirname(require.resolve('ses')), 'ses.umd.min.js'), 'utf8').replace(
      /\/\/# sourceMappingURL=\S*\s*$/,
      '',
    );
    // The SES bundle goes in as code, ahead of everything (lockdown must run first); it must hold
    // nothing that would end or confuse the inline script.
    if (/<\/script|<!--/i.test(ses)) throw new Error('the SES bundle cannot be inlined in the evaluator page');
    script.push(
      ses,
      browserCode('lockdown'),
      `var DOCUMENT_RUNTIME_SOURCE = ${literal(browserCode('compartment'))};`,
      `var NUNJUCKS_EXPRESSION = ${literal(nunjucksForCompartments(slim))};`,
    );
  }
  script.push(`var TEMPLATE_CACHE_SIZE = ${PAGE_TEMPLATE_CACHE_SIZE};`, browserCode('harness'));
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>evaluator</title></head><body><script>${script.join('\n')}</script></body></html>`;
  cachedPage = page;
  return page;
}

/**
 * Response headers of the evaluator page. `sandbox allow-scripts` gives it an opaque origin: no
 * storage, no cookies, nothing shared with the next evaluation; `connect-src` and `worker-src` fall
 * back to `'none'`, so fetch/XHR/WebSocket/EventSource and workers are refused before interception.
 * `'unsafe-eval'` lets compartments evaluate code.
 */
export const EVALUATOR_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'",
};
