/**
 * The runtime of ONE document: it runs inside the document's SES Compartment (evaluated anew for
 * each document, so nothing here outlives it). It installs the Jinja2 compatibility, the `__proto__`-safe context
 * copy, the environment with Pressroom's filters, tests and globals, and renders every part into one
 * plain result (never throws). Intrinsics are captured before any template code runs.
 */
import type { DocumentHelpers } from './document-helpers.js';
import type { DocumentResult } from './document-result.js';
import type { Nunjucks } from './nunjucks-types.js';
import { installLanguage } from './language.js';

/** Loads one part's compiled code into the `{root, …}` object nunjucks expects. */
export type LoadPart<T> = (part: T) => unknown;

export interface DocumentRenderer<T> {
  /**
   * Renders every part with `dataJson`; output over `limit` UTF-16 units is `too-large`. `strict`: the
   * template's strict mode, where what would be a warning of the data is an error (`language.ts`).
   */
  renderParts(
    templates: Record<string, T>,
    load: LoadPart<T>,
    dataJson: string,
    limit: number,
    strict: boolean,
  ): DocumentResult;
}

export function createDocumentRenderer<T>(nj: Nunjucks, helpers: DocumentHelpers): DocumentRenderer<T> {
  nj.installJinjaCompat();
  // Nunjucks copies the data into its context with `target[key] = value`; for a `__proto__` key
  // (which JSON.parse keeps as an own property) that would set the context's prototype and let the
  // data define every name the template looks up. Copy such keys as own properties instead.
  const defineOwn = Object.defineProperty;
  nj.lib.extend = nj.lib._assign = function (target: Record<string, unknown>, source: Record<string, unknown>) {
    target = target || {};
    Object.keys(source || {}).forEach((key) => {
      if (key === '__proto__')
        defineOwn(target, key, { value: source[key], enumerable: true, writable: true, configurable: true });
      else target[key] = source[key];
    });
    return target;
  };
  // dev: true keeps lineno/colno on runtime errors instead of folding them into the message.
  const env = new nj.Environment([], { autoescape: true, throwOnUndefined: false, dev: true });
  // The `css` part is a template too, but CSS is not HTML: `&`, quotes and `<` print as they are
  // (`html-assembly.ts` keeps `</style` from ending its element).
  const cssEnv = new nj.Environment([], { autoescape: false, throwOnUndefined: false, dev: true });
  const language = installLanguage(nj, env, helpers);
  installLanguage(nj, cssEnv, helpers, language);
  // Captured before any template code runs, which may replace globals.
  const Template = nj.Template;
  const parse = JSON.parse;
  const keysOf = Object.keys;
  const toText = String;
  const isRangeError = (e: unknown) => e instanceof RangeError;

  function describe(error: unknown, key: string): DocumentResult {
    try {
      const withCause = error as { cause?: unknown; lineno?: unknown; colno?: unknown };
      const cause = (withCause && withCause.cause ? withCause.cause : error) as { message?: unknown };
      let message = toText(cause && cause.message !== undefined ? cause.message : cause);
      // A string past V8's limit is output too large; an array past it is a list built too long
      // (a huge range(): nunjucks builds the whole list first), not output.
      if (isRangeError(cause) && /Invalid string length/.test(message)) return { kind: 'too-large' };
      if (isRangeError(cause) && /Invalid (typed )?array length/.test(message))
        message = 'A list grew too long (a huge range()?)';
      if (isRangeError(cause) && /call stack/.test(message))
        message = 'Maximum call stack size exceeded (a macro calling itself without end?)';
      const result: DocumentResult = { kind: 'error', template: key, message: message.split('\n')[0]!.slice(0, 300) };
      // Compiled code reports 0-based positions.
      if (typeof withCause.lineno === 'number') result.line = withCause.lineno + 1;
      if (typeof withCause.colno === 'number') result.column = withCause.colno + 1;
      return result;
    } catch {
      return { kind: 'error', template: key, message: 'The template failed' };
    }
  }

  return {
    renderParts(templates, load, dataJson, limit, strict) {
      const out: Record<string, string> = {};
      let total = 0;
      let key = '';
      language.setStrict(strict === true);
      try {
        const keys = keysOf(templates);
        for (let i = 0; i < keys.length; i++) {
          key = keys[i]!;
          language.startPart(key);
          const context = parse(dataJson);
          const props = load(templates[key]!);
          const html = new Template({ type: 'code', obj: props }, key === 'css' ? cssEnv : env, key, true).render(
            context,
          );
          if (typeof html !== 'string') throw new Error('The template produced no text');
          total += html.length;
          if (total > limit) return { kind: 'too-large' };
          out[key] = html;
        }
        return { kind: 'ok', out, warnings: language.warnings() };
      } catch (error) {
        return describe(error, key);
      }
    },
  };
}
