/**
 * Turns Jinja2-style template source into JavaScript source with Nunjucks' compiler — in Node, but
 * without ever running it. The compiler only lexes, parses and generates code; the generated code is
 * executed only inside Chromium's sandboxed evaluator (see `browser/sandbox/evaluator-page.ts`), because
 * Nunjucks running in Node hands a template author the server
 * (`{{ range.constructor("return process.pid")() }}` works there).
 *
 * Compiling is slow (tens of milliseconds for an invoice: docs/performance-log/2026-11-22-to-28-service.md), so results are cached by source text.
 */
import { createRequire } from 'node:module';
import nunjucks from 'nunjucks';
import { AppError } from '../shared/errors.js';
import { SUPPORTED_FILTERS, SUPPORTED_TESTS } from './catalogue.js';
import {
  assetNamesInTree,
  mayNameAssets,
  mergeAssetNames,
  NO_ASSET_NAMES,
  type TemplateAssetNames,
} from './asset-names.js';

/**
 * Largest template source accepted, in characters: the largest part the template schema accepts
 * (html, 2,000,000), so what saves also renders (save and render share this check). Compiling the
 * largest takes seconds: the service compiles long sources on template threads
 * (templates/template-threads.ts), and the result is cached here.
 */
export const MAX_TEMPLATE_SOURCE_CHARS = 2_000_000;

const CACHE_MAX_ENTRIES = 256;
const CACHE_MAX_CODE_CHARS = 64 * 1024 * 1024;

// The Jinja2 compatibility layer also teaches the *parser* slices (`items[1:3]`); the runtime half is
// installed again inside the sandbox, where the code runs.
nunjucks.installJinjaCompat();

/** The parser and compiler Nunjucks exports but its type definitions omit, and its transformer (not exported). */
const { parser, compiler } = nunjucks as unknown as {
  parser: { parse(src: string, extensions: unknown[], opts: object): TemplateNode };
  compiler: {
    Compiler: new (name: string, throwOnUndefined: boolean) => { compile(ast: TemplateNode): void; getCode(): string };
  };
};
const transformer = createRequire(import.meta.url)('nunjucks/src/transformer') as {
  transform(ast: TemplateNode, asyncFilters: string[], name: string): TemplateNode;
};

/** A node of Nunjucks' parse tree (positions are 0-based). */
export interface TemplateNode {
  typename: string;
  lineno?: number;
  colno?: number;
  fields?: string[];
  [field: string]: unknown;
}

/**
 * String literals in the generated code (template text, quoted strings) are written with `<`, `>`,
 * `(` and `/` as \u escapes. The compartment evaluator's SES refuses any source in which it sees
 * an HTML comment token or `import(`/`eval(` — even inside a string — so template text such as
 * `<!-- note -->` or "see import(2024)" would otherwise fail. Same string values, other spelling.
 */
const { Compiler } = (nunjucks as unknown as { compiler: { Compiler: { prototype: Record<string, unknown> } } })
  .compiler;
const compileLiteral = Compiler.prototype.compileLiteral as (
  this: CompilerThis,
  node: { value: unknown },
  frame: unknown,
) => void;
Compiler.prototype.compileLiteral = function (this: CompilerThis, node: { value: unknown }, frame: unknown): void {
  if (typeof node.value !== 'string') return compileLiteral.call(this, node, frame);
  this._emit(stringLiteral(node.value));
};

/** The part of nunjucks' Compiler the patches here use. */
type CompilerThis = { _emit(code: string): void; compile(node: TemplateNode, frame: unknown): void; buffer: string };

/** `text` as a JavaScript string literal SES accepts (see above). */
function stringLiteral(text: string): string {
  return JSON.stringify(text).replace(
    /[<>(/\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Undefined variables (issue 13): an output whose value is a variable lookup — `{{ x }}`,
 * `{{ a.b.c }}`, `{{ a[0].b }}` — prints through the runtime's check (`browser/language.ts`, the
 * global of this name), which reports an undefined value with the variable's name and position: a
 * warning UNDEFINED_VARIABLE and nothing printed, or in a strict template an error. (null is printed
 * as nothing without a word: JSON null is a deliberate empty.) Before the call the code sets
 * nunjucks' `lineno`/`colno`, as its own function calls do, so an error is placed at the variable.
 * The code is the same for strict and normal templates (it is cached by source): the document says
 * which it is at runtime.
 */
const UNDEFINED_CHECK = '__pressroom_check_defined';
type OutputNode = { children: TemplateNode[]; lineno?: number; colno?: number };
const compileOutput = Compiler.prototype.compileOutput as (
  this: CompilerThis,
  node: OutputNode,
  frame: unknown,
) => void;
Compiler.prototype.compileOutput = function (this: CompilerThis, node: OutputNode, frame: unknown): void {
  for (const child of node.children) {
    const name = child.typename === 'TemplateData' ? undefined : variableName(child);
    if (name === undefined) {
      compileOutput.call(this, { lineno: node.lineno, colno: node.colno, children: [child] }, frame);
      continue;
    }
    const { lineno = 0, colno = 0 } = rootOf(child);
    this._emit(
      `${this.buffer} += runtime.suppressValue((lineno = ${lineno}, colno = ${colno}, env.getGlobal("${UNDEFINED_CHECK}")(`,
    );
    this.compile(child, frame);
    this._emit(`, ${stringLiteral(name)}, ${lineno}, ${colno})), env.opts.autoescape);\n`);
  }
};

/** `customer.name`, `items[0].sku`, `rows[i]` for a lookup chain rooted in a variable; undefined for anything else. */
function variableName(node: TemplateNode): string | undefined {
  if (node.typename === 'Symbol') return String(node.value);
  if (node.typename !== 'LookupVal') return undefined;
  const base = variableName(node.target as TemplateNode);
  if (base === undefined) return undefined;
  const key = node.val as TemplateNode;
  if (key.typename === 'Literal')
    return typeof key.value === 'string' && /^[A-Za-z_$][\w$]*$/.test(key.value)
      ? `${base}.${key.value}`
      : `${base}[${JSON.stringify(key.value)}]`;
  return `${base}[${variableName(key) ?? '…'}]`;
}

/** The variable a lookup chain starts from (its position is where the expression starts). */
function rootOf(node: TemplateNode): TemplateNode {
  return node.typename === 'LookupVal' ? rootOf(node.target as TemplateNode) : node;
}

/**
 * `{% set ns.total = ns.total + x %}` (Jinja2's way out of loop scoping, with `namespace()`): nunjucks
 * parses the target as a lookup and then compiles nonsense ("unexpected end of template", issue 13).
 * Such a set becomes a call of the runtime's namespace setter (`browser/jinja2-additions.ts`), which
 * refuses anything that is not a `namespace()`, and prints nothing.
 */
const NAMESPACE_SETTER = '__pressroom_namespace_set';
type ParserThis = { fail(message: string, lineno?: number, colno?: number): never };
const { Parser } = (nunjucks as unknown as { parser: { Parser: { prototype: Record<string, unknown> } } }).parser;
const nodes = createRequire(import.meta.url)('nunjucks/src/nodes') as Record<
  string,
  new (
    ...args: unknown[]
  ) => TemplateNode
>;
const parseSet = Parser.prototype.parseSet as (this: ParserThis) => TemplateNode;
Parser.prototype.parseSet = function (this: ParserThis): TemplateNode {
  const node = parseSet.call(this);
  const targets = node.targets as TemplateNode[];
  if (!targets.some((t) => t.typename === 'LookupVal')) return node;
  const target = targets[0]!;
  const attr = target.val as TemplateNode | undefined;
  if (
    targets.length !== 1 ||
    target.typename !== 'LookupVal' ||
    attr?.typename !== 'Literal' ||
    typeof attr.value !== 'string'
  ) {
    this.fail('set: only one target, a name or namespace.attribute, can be set here', node.lineno, node.colno);
  }
  const { lineno, colno } = node;
  const value = node.value ?? node.body;
  const args = new nodes.NodeList!(lineno, colno, [target.target, attr, value]);
  const call = new nodes.FunCall!(lineno, colno, new nodes.Symbol!(lineno, colno, NAMESPACE_SETTER), args);
  return new nodes.Output!(lineno, colno, [call]);
};

/** What compiling a source gives: its code, and the asset names its tree names (read in the same parse). */
interface Compiled {
  code: string;
  assets: TemplateAssetNames;
}

/**
 * What compiling one source ended in, as plain data (a thread sends it back, structured-cloned): the
 * compiled form, or the syntax error's message and position.
 */
export type CompileOutcome =
  | { ok: true; compiled: Compiled }
  | { ok: false; message: string; details: Record<string, unknown> };

/** Sources compiled lately, and what they compiled to; a syntax error is kept too, so a long broken source is not compiled again here. */
const cache = new Map<string, CompileOutcome>();
let cachedChars = 0;

/** Precompiles template source to Nunjucks' JavaScript form; throws TEMPLATE_SYNTAX_ERROR with line/column. */
export function compileTemplate(source: string, name = 'template'): string {
  return compiled(source, name).code;
}

/**
 * The asset names a template's parts (html, css, header, footer; null or empty skipped) name together
 * (asset-names.ts), from the parse each part's compilation makes: a template checked when it was
 * saved costs nothing more here. A part that does not compile may name any.
 */
export function assetNamesOf(sources: readonly (string | null | undefined)[]): TemplateAssetNames {
  return mergeAssetNames(
    sources.map((source) => (source && mayNameAssets(source) ? compiledAssetNames(source) : NO_ASSET_NAMES)),
  );
}

function compiledAssetNames(source: string): TemplateAssetNames {
  try {
    return compiled(source, 'template').assets;
  } catch (error) {
    if (error instanceof AppError && error.code === 'TEMPLATE_SYNTAX_ERROR') return { names: [], computed: true };
    throw error;
  }
}

function compiled(source: string, name: string): Compiled {
  let outcome = cache.get(source);
  if (outcome !== undefined) {
    // Refresh recency: Map iteration order is insertion order, so re-insert.
    cache.delete(source);
    cache.set(source, outcome);
  } else {
    outcome = compileOutcome(source, name);
    rememberCompiled(source, outcome);
  }
  if (!outcome.ok) throw new AppError('TEMPLATE_SYNTAX_ERROR', outcome.message, { details: outcome.details });
  return outcome.compiled;
}

/** Whether `source` was compiled lately (so compiling it now costs a lookup). */
export function isCompiled(source: string): boolean {
  return cache.has(source);
}

/** Compiles `source` without the cache, as data: what a template thread runs (template-threads.ts). */
export function compileOutcome(source: string, name: string): CompileOutcome {
  try {
    return { ok: true, compiled: compileUncached(source, name) };
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'TEMPLATE_SYNTAX_ERROR') throw error;
    return { ok: false, message: error.message, details: { ...error.details } };
  }
}

function compileUncached(source: string, name: string): Compiled {
  if (source.length > MAX_TEMPLATE_SOURCE_CHARS) {
    throw new AppError(
      'TEMPLATE_SYNTAX_ERROR',
      `The template is longer than ${MAX_TEMPLATE_SOURCE_CHARS} characters; split it or move data into the request`,
    );
  }
  let ast: TemplateNode;
  try {
    ast = parser.parse(source, [], {});
  } catch (error) {
    throw toSyntaxError(error, source);
  }
  assertKnownNames(ast);
  // Read before the transform, which rewrites parts of the tree.
  const assets = mayNameAssets(source) ? assetNamesInTree(ast, source) : NO_ASSET_NAMES;
  try {
    const c = new compiler.Compiler(name, false);
    c.compile(transformer.transform(ast, [], name));
    return { code: c.getCode(), assets };
  } catch (error) {
    throw toSyntaxError(error, source);
  }
}

/** Parses template source (never runs it); throws TEMPLATE_SYNTAX_ERROR with line/column. */
export function parseTemplate(source: string): TemplateNode {
  try {
    return parser.parse(source, [], {});
  } catch (error) {
    throw toSyntaxError(error, source);
  }
}

/**
 * Refuses a filter or test the language does not have (catalogue.ts), at its own position: nunjucks
 * would only find out while rendering, and then without a useful position.
 */
function assertKnownNames(ast: TemplateNode): void {
  const seen = new Set<object>();
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) return node.forEach(visit);
    const n = node as TemplateNode;
    const nameNode = n.name as TemplateNode | undefined;
    if ((n.typename === 'Filter' || n.typename === 'FilterAsync') && nameNode?.typename === 'Symbol') {
      const name = String(nameNode.value);
      if (!SUPPORTED_FILTERS.has(name))
        throw unknownName('filter', name, nameNode.lineno ?? n.lineno, nameNode.colno ?? n.colno, SUPPORTED_FILTERS);
    }
    if (n.typename === 'Is') {
      const right = n.right as TemplateNode | undefined;
      const name =
        right?.typename === 'Symbol'
          ? String(right.value)
          : right?.typename === 'FunCall' && (right.name as TemplateNode)?.typename === 'Symbol'
            ? String((right.name as TemplateNode).value)
            : undefined;
      if (name !== undefined && !SUPPORTED_TESTS.has(name))
        throw unknownName('test', name, right?.lineno ?? n.lineno, right?.colno ?? n.colno, SUPPORTED_TESTS);
    }
    for (const field of n.fields ?? []) visit(n[field]);
    if (Array.isArray(n.children)) visit(n.children);
  };
  visit(ast);
}

function unknownName(
  kind: 'filter' | 'test',
  name: string,
  lineno: number | undefined,
  colno: number | undefined,
  known: ReadonlySet<string>,
): AppError {
  const line = (lineno ?? 0) + 1;
  const column = (colno ?? 0) + 1;
  const near = [...known].filter((k) => k.startsWith(name.slice(0, 2))).slice(0, 5);
  const hint = near.length > 0 ? ` (did you mean ${near.map((k) => `"${k}"`).join(', ')}?)` : '';
  return new AppError(
    'TEMPLATE_SYNTAX_ERROR',
    `Template syntax error (line ${line}, column ${column}): unknown ${kind} "${name}"${hint}; the list is in docs/templates.md`,
    {
      details: { line, column },
    },
  );
}

interface NunjucksTemplateError {
  message?: unknown;
  lineno?: unknown;
  colno?: unknown;
}

function toSyntaxError(error: unknown, source: string): AppError {
  if (error instanceof RangeError) {
    // The parser is recursive: thousands of nested brackets or blocks exhaust the stack.
    return new AppError(
      'TEMPLATE_SYNTAX_ERROR',
      'The template is nested too deeply (brackets, tags or blocks); flatten it',
      { cause: error },
    );
  }
  const e = (error ?? {}) as NunjucksTemplateError;
  const isNunjucksError = error instanceof Error && error.name === 'Template render error';
  let line = typeof e.lineno === 'number' ? e.lineno : undefined;
  const column = typeof e.colno === 'number' ? e.colno : undefined;
  let reason =
    isNunjucksError && typeof e.message === 'string'
      ? e.message
      : 'unexpected end of template (an unclosed tag, bracket or string?)';
  // Parser errors raised at end of input carry no position; the end of the source is where it is.
  if (line === undefined && /end of (file|template)|unclosed|expected variable end|expected block end/i.test(reason)) {
    line = source.split('\n').length;
  }
  reason = reason.split('\n')[0]!.slice(0, 300);
  const where =
    line === undefined ? '' : column === undefined ? ` (line ${line})` : ` (line ${line}, column ${column})`;
  return new AppError('TEMPLATE_SYNTAX_ERROR', `Template syntax error${where}: ${reason}`, {
    cause: error,
    details: { ...(line === undefined ? {} : { line }), ...(column === undefined ? {} : { column }) },
  });
}

/** Keeps what `source` compiled to (here or on a thread), within the cache's bounds. */
export function rememberCompiled(source: string, outcome: CompileOutcome): void {
  if (cache.has(source)) return;
  cache.set(source, outcome);
  cachedChars += cachedSize(source, outcome);
  while (cache.size > CACHE_MAX_ENTRIES || cachedChars > CACHE_MAX_CODE_CHARS) {
    const oldest = cache.entries().next();
    if (oldest.done) break;
    cachedChars -= cachedSize(...oldest.value);
    cache.delete(oldest.value[0]);
  }
}

function cachedSize(source: string, outcome: CompileOutcome): number {
  return source.length + (outcome.ok ? outcome.compiled.code.length : outcome.message.length);
}
