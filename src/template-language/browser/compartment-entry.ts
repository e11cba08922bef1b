/**
 * Bundle evaluated in each document's fresh Compartment (`harness.ts`), followed by
 * `pressroomDocument.create(<nunjucks expression>, {<part>: function () { <compiled code> }, …})`.
 * `create` returns the one-shot render function `(dataJson, limit) → result JSON`.
 */
import { createDocumentRenderer } from './document-runtime.js';
import type { Nunjucks } from './nunjucks-types.js';

type PartCode = () => unknown;

export function create(nj: Nunjucks, templates: Record<string, PartCode>): (dataJson: string, limit: number) => string {
  const renderer = createDocumentRenderer<PartCode>(nj);
  const stringify = JSON.stringify;
  let used = false;
  return (dataJson, limit) => {
    if (used) return '{"kind":"error","message":"render called twice"}';
    used = true;
    return stringify(renderer.renderParts(templates, (part) => part(), dataJson, limit));
  };
}
