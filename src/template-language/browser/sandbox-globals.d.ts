/**
 * What the evaluator page defines besides the DOM: SES (loaded ahead of everything on the
 * compartment page) and the constants `evaluatorPageHtml()` writes into the page before the harness.
 */
declare function lockdown(options: Record<string, string>): void;
declare function harden<T>(value: T): T;
declare class Compartment {
  constructor(options: { __options__: true; globals: Record<string, unknown> });
  evaluate(source: string): unknown;
  readonly globalThis: Record<string, unknown>;
}
/** Compiled templates the page keeps (PAGE_TEMPLATE_CACHE_SIZE in Node). */
declare const TEMPLATE_CACHE_SIZE: number;
/** Compartment page: nunjucks-slim as an expression whose value is the nunjucks object. */
declare const NUNJUCKS_EXPRESSION: string;
/** Compartment page: the document runtime bundle (document-runtime-entry.ts) as source text. */
declare const DOCUMENT_RUNTIME_SOURCE: string;
