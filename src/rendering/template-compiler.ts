/**
 * Turns Jinja2-style template source into JavaScript source with Nunjucks' compiler — in Node, but
 * without ever running it. The compiler only lexes, parses and generates code; the generated code is
 * executed only inside Chromium's sandboxed evaluator (see `sandbox/evaluator-page.ts`), because
 * Nunjucks running in Node hands a template author the server
 * (`{{ range.constructor("return process.pid")() }}` works there).
 *
 * Compiling is slow (≈20 ms for the benchmark invoice), so results are cached by source text.
 */
import nunjucks from 'nunjucks';
import { AppError } from '../shared/errors.js';

/** Largest template source accepted; compiling is ~1.4 s per MiB and blocks the event loop once. */
export const MAX_TEMPLATE_SOURCE_BYTES = 1024 * 1024;

const CACHE_MAX_ENTRIES = 256;
const CACHE_MAX_CODE_CHARS = 64 * 1024 * 1024;

// The Jinja2 compatibility layer also teaches the *parser* slices (`items[1:3]`); the runtime half is
// installed again inside the sandbox, where the code runs.
nunjucks.installJinjaCompat();

/** The compiler entry point Nunjucks exports but its type definitions omit. */
const { compiler } = nunjucks as unknown as {
  compiler: { compile(src: string, asyncFilters: string[], extensions: unknown[], name: string, opts: { throwOnUndefined: boolean }): string };
};

/**
 * String literals in the generated code (template text, quoted strings) are written with `<`, `>`,
 * `(` and `/` as \u escapes. The compartment evaluator's SES refuses any source in which it sees
 * an HTML comment token or `import(`/`eval(` — even inside a string — so template text such as
 * `<!-- note -->` or "see import(2024)" would otherwise fail. Same string values, other spelling.
 */
const { Compiler } = (nunjucks as unknown as { compiler: { Compiler: { prototype: Record<string, unknown> } } }).compiler;
const compileLiteral = Compiler.prototype.compileLiteral as (this: { _emit(code: string): void }, node: { value: unknown }, frame: unknown) => void;
Compiler.prototype.compileLiteral = function (this: { _emit(code: string): void }, node: { value: unknown }, frame: unknown): void {
  if (typeof node.value !== 'string') return compileLiteral.call(this, node, frame);
  this._emit(JSON.stringify(node.value).replace(/[<>(/\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
};

const cache = new Map<string, string>();
let cachedChars = 0;

/** Result of a syntax check, for template validation at save time. */
export type TemplateSyntaxCheck = { ok: true } | { ok: false; message: string; line?: number; column?: number };

/** Precompiles template source to Nunjucks' JavaScript form; throws TEMPLATE_SYNTAX_ERROR with line/column. */
export function compileTemplate(source: string, name = 'template'): string {
  const hit = cache.get(source);
  if (hit !== undefined) {
    // Refresh recency: Map iteration order is insertion order, so re-insert.
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  const code = compileUncached(source, name);
  remember(source, code);
  return code;
}

/** Checks template syntax without throwing. */
export function checkTemplateSyntax(source: string): TemplateSyntaxCheck {
  try {
    compileTemplate(source);
    return { ok: true };
  } catch (error) {
    if (error instanceof AppError && error.code === 'TEMPLATE_SYNTAX_ERROR') {
      const { line, column } = error.details ?? {};
      return { ok: false, message: error.message, ...(line === undefined ? {} : { line }), ...(column === undefined ? {} : { column }) };
    }
    throw error;
  }
}

function compileUncached(source: string, name: string): string {
  if (Buffer.byteLength(source, 'utf8') > MAX_TEMPLATE_SOURCE_BYTES) {
    throw new AppError('TEMPLATE_SYNTAX_ERROR', `The template is larger than ${MAX_TEMPLATE_SOURCE_BYTES / 1024} KiB; split it or move data into the request`);
  }
  try {
    return compiler.compile(source, [], [], name, { throwOnUndefined: false });
  } catch (error) {
    throw toSyntaxError(error, source);
  }
}

interface NunjucksTemplateError {
  message?: unknown;
  lineno?: unknown;
  colno?: unknown;
}

function toSyntaxError(error: unknown, source: string): AppError {
  if (error instanceof RangeError) {
    // The parser is recursive: thousands of nested brackets or blocks exhaust the stack.
    return new AppError('TEMPLATE_SYNTAX_ERROR', 'The template is nested too deeply (brackets, tags or blocks); flatten it', { cause: error });
  }
  const e = (error ?? {}) as NunjucksTemplateError;
  const isNunjucksError = error instanceof Error && error.name === 'Template render error';
  let line = typeof e.lineno === 'number' ? e.lineno : undefined;
  const column = typeof e.colno === 'number' ? e.colno : undefined;
  let reason = isNunjucksError && typeof e.message === 'string' ? e.message : 'unexpected end of template (an unclosed tag, bracket or string?)';
  // Parser errors raised at end of input carry no position; the end of the source is where it is.
  if (line === undefined && /end of (file|template)|unclosed|expected variable end|expected block end/i.test(reason)) {
    line = source.split('\n').length;
  }
  reason = reason.split('\n')[0]!.slice(0, 300);
  const where = line === undefined ? '' : column === undefined ? ` (line ${line})` : ` (line ${line}, column ${column})`;
  return new AppError('TEMPLATE_SYNTAX_ERROR', `Template syntax error${where}: ${reason}`, {
    cause: error,
    details: { ...(line === undefined ? {} : { line }), ...(column === undefined ? {} : { column }) },
  });
}

function remember(source: string, code: string): void {
  cache.set(source, code);
  cachedChars += source.length + code.length;
  while (cache.size > CACHE_MAX_ENTRIES || cachedChars > CACHE_MAX_CODE_CHARS) {
    const oldest = cache.keys().next();
    if (oldest.done) break;
    cachedChars -= oldest.value.length + (cache.get(oldest.value)?.length ?? 0);
    cache.delete(oldest.value);
  }
}
