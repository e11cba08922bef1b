/**
 * Bundle evaluated in each document's fresh Compartment (`harness.ts`), followed by
 * `pressroomDocument.create(<nunjucks expression>, {<part>: function () { <compiled code> }, …}, pressroomHelpers)`,
 * where `pressroomHelpers` is the page's hardened `DocumentHelpers` (`document-helpers.ts`).
 * `create` returns the one-shot render function `(dataJson, limit, strict) → result JSON`.
 */
import type { DocumentHelpers } from './document-helpers.js';
import { createDocumentRenderer } from './document-runtime.js';
import type { Nunjucks } from './nunjucks-types.js';

type PartCode = () => unknown;

export function create(
  nj: Nunjucks,
  templates: Record<string, PartCode>,
  helpers: DocumentHelpers,
): (dataJson: string, limit: number, strict: boolean) => string {
  const renderer = createDocumentRenderer<PartCode>(nj, helpers);
  const stringify = JSON.stringify;
  let used = false;
  return (dataJson, limit, strict) => {
    if (used) return '{"kind":"error","message":"render called twice"}';
    used = true;
    return stringify(renderer.renderParts(templates, (part) => part(), dataJson, limit, strict === true));
  };
}
