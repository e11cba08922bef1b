/**
 * The safety walk of a parsed JSON body: what schemas cannot express (nesting depth, NUL characters,
 * keys that reach prototypes). Pure and free of imports with side effects, so the parse worker
 * (json-parse-worker.ts) runs the same walk as the event loop.
 */
import type { ValidationIssue } from '../../shared/errors.js';

export const MAX_JSON_DEPTH = 64;

/** A walk stops collecting after this many problems; the client fixes those first. */
const MAX_ISSUES = 20;

/** The place of a node, as a chain to its parent: built into a `loc` array only for a node with a problem. */
interface Place {
  readonly parent: Place | undefined;
  readonly step: string | number;
}

function locOf(place: Place | undefined, root: readonly (string | number)[]): (string | number)[] {
  const steps: (string | number)[] = [];
  for (let p = place; p; p = p.parent) steps.push(p.step);
  return [...root, ...steps.reverse()];
}

const isObject = (v: unknown): v is object => v !== null && typeof v === 'object';

/** Every problem of `value` (at most MAX_ISSUES), each with its place under `root`; empty when the value is safe. */
export function jsonSafetyIssues(value: unknown, root: readonly (string | number)[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const visit = (node: unknown, place: Place | undefined, depth: number): void => {
    if (issues.length >= MAX_ISSUES) return;
    if (typeof node === 'string') {
      if (node.includes('\u0000'))
        issues.push({
          loc: locOf(place, root),
          msg: 'String should not contain the NUL character (\\u0000)',
          type: 'string_nul_character',
        });
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (depth > MAX_JSON_DEPTH) {
      issues.push({
        loc: locOf(place, root),
        msg: `JSON should not be nested deeper than ${MAX_JSON_DEPTH} levels`,
        type: 'json_too_deep',
        ctx: { max_depth: MAX_JSON_DEPTH },
      });
      return;
    }
    if (Array.isArray(node)) {
      for (let index = 0; index < node.length; index++) visit(node[index], { parent: place, step: index }, depth + 1);
      return;
    }
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const here: Place = { parent: place, step: key };
      if (key.includes('\u0000'))
        issues.push({
          loc: locOf(here, root),
          msg: 'Key should not contain the NUL character (\\u0000)',
          type: 'string_nul_character',
        });
      else if (key === '__proto__')
        issues.push({ loc: locOf(here, root), msg: 'Keys named __proto__ are not allowed', type: 'forbidden_key' });
      else if (key === 'constructor' && isObject(record[key]) && 'prototype' in (record[key] as object)) {
        issues.push({
          loc: locOf(here, root),
          msg: 'A constructor.prototype key is not allowed',
          type: 'forbidden_key',
        });
      }
      visit(record[key], here, depth + 1);
    }
  };
  visit(value, undefined, 1);
  return issues;
}
