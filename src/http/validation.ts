/**
 * Request validation in FastAPI's shape. Ajv checks every schema (all errors, not only the first); its
 * errors become `{detail: [{loc, msg, type}]}` with `loc` naming the place (`["body","template_id"]`).
 * Bodies are not type-coerced (a number is not a string, as in pydantic's strict types for JSON);
 * query strings are, since everything in a URL is text.
 * JSON bodies are also checked for what the schemas cannot express and both databases must agree on
 * (json-body/json-safety.ts): nesting deeper than 64 levels, `\u0000` in any string or key (PostgreSQL
 * cannot store it), and `__proto__`/`constructor.prototype` keys (prototype pollution).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ValidationError, type ValidationIssue } from '../shared/errors.js';

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({ allErrors: true, coerceTypes, useDefaults: true, removeAdditional: false, strict: false });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv('array');

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  const validate = ajv.compile(schema as object) as ValidateFunction;
  return (data: unknown) =>
    validate(data) ? { value: data } : { error: new AjvValidationError(validate.errors ?? [], httpPart ?? 'body') };
};

/** Carries Ajv's errors to the error handler, which turns them into the 422 envelope. */
export class AjvValidationError extends Error {
  override readonly name = 'AjvValidationError';
  constructor(
    readonly errors: ErrorObject[],
    readonly httpPart: string,
  ) {
    super('request validation failed');
  }
}

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

function pathOf(instancePath: string): (string | number)[] {
  if (!instancePath) return [];
  return instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** What each `format` is called in a message; formats not listed go by their own name. */
const FORMAT_WORDS: Record<string, string> = {
  email: 'email address',
  uri: 'URI',
  url: 'URL',
  uuid: 'UUID',
  'date-time': 'date and time (RFC 3339)',
  date: 'date (YYYY-MM-DD)',
  hostname: 'host name',
  ipv4: 'IPv4 address',
  ipv6: 'IPv6 address',
};

/** `1 item`, `2 items`. */
const count = (n: number, singular: string, plural = `${singular}s`): string => `${n} ${n === 1 ? singular : plural}`;

const TYPE_NAMES: Record<string, string> = {
  string: 'string_type',
  integer: 'int_type',
  number: 'float_type',
  boolean: 'bool_type',
  object: 'dict_type',
  array: 'list_type',
  null: 'none_required',
};

/** A path parameter as the OpenAPI document names it: the wildcard of `/v1/assets/*` is `{name}` (app.ts nameWildcard). */
const wildcardNamed = (key: string | number): string | number => (key === '*' ? 'name' : key);

function issueFor(error: ErrorObject, part: string): ValidationIssue | null {
  const [first, ...rest] = pathOf(error.instancePath);
  const field =
    part === 'params' && first !== undefined
      ? [wildcardNamed(first), ...rest]
      : [...(first === undefined ? [] : [first]), ...rest];
  const loc: (string | number)[] = [PART_NAMES[part] ?? part, ...field];
  const p = error.params as Record<string, any>;
  switch (error.keyword) {
    case 'required':
      return { loc: [...loc, p.missingProperty], msg: 'Field required', type: 'missing' };
    case 'type': {
      const expected = String(Array.isArray(p.type) ? (p.type.find((t: string) => t !== 'null') ?? p.type[0]) : p.type);
      // The article goes with "valid", not with the type: "a valid object", "a valid integer".
      const msg = expected === 'null' ? 'Input should be null' : `Input should be a valid ${expected}`;
      return { loc, msg, type: TYPE_NAMES[expected] ?? 'type_error' };
    }
    case 'minLength':
      return {
        loc,
        msg: `String should have at least ${count(p.limit, 'character')}`,
        type: 'string_too_short',
        ctx: { min_length: p.limit },
      };
    case 'maxLength':
      return {
        loc,
        msg: `String should have at most ${count(p.limit, 'character')}`,
        type: 'string_too_long',
        ctx: { max_length: p.limit },
      };
    case 'pattern':
      return {
        loc,
        msg: `String should match pattern '${p.pattern}'`,
        type: 'string_pattern_mismatch',
        ctx: { pattern: p.pattern },
      };
    case 'minimum':
      return {
        loc,
        msg: `Input should be greater than or equal to ${p.limit}`,
        type: 'greater_than_equal',
        ctx: { ge: p.limit },
      };
    case 'exclusiveMinimum':
      return { loc, msg: `Input should be greater than ${p.limit}`, type: 'greater_than', ctx: { gt: p.limit } };
    case 'maximum':
      return {
        loc,
        msg: `Input should be less than or equal to ${p.limit}`,
        type: 'less_than_equal',
        ctx: { le: p.limit },
      };
    case 'exclusiveMaximum':
      return { loc, msg: `Input should be less than ${p.limit}`, type: 'less_than', ctx: { lt: p.limit } };
    case 'multipleOf':
      return {
        loc,
        msg: `Input should be a multiple of ${p.multipleOf}`,
        type: 'multiple_of',
        ctx: { multiple_of: p.multipleOf },
      };
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).filter((v) => v !== null).map((v) => `'${String(v)}'`);
      const text = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}` : allowed[0];
      return { loc, msg: `Input should be ${text}`, type: 'enum', ctx: { expected: text } };
    }
    case 'const':
      return { loc, msg: `Input should be '${String(p.allowedValue)}'`, type: 'literal_error' };
    case 'minItems':
      return { loc, msg: `List should have at least ${count(p.limit, 'item')}`, type: 'too_short' };
    case 'maxItems':
      return { loc, msg: `List should have at most ${count(p.limit, 'item')}`, type: 'too_long' };
    case 'uniqueItems':
      return { loc, msg: `List should have unique items (items ${p.j} and ${p.i} are equal)`, type: 'list_not_unique' };
    case 'minProperties':
      return { loc, msg: `Object should have at least ${count(p.limit, 'property', 'properties')}`, type: 'too_short' };
    case 'maxProperties':
      return { loc, msg: `Object should have at most ${count(p.limit, 'property', 'properties')}`, type: 'too_long' };
    case 'additionalProperties':
      return { loc: [...loc, p.additionalProperty], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' };
    case 'format':
      return { loc, msg: `Input should be a valid ${FORMAT_WORDS[p.format] ?? p.format}`, type: 'value_error' };
    case 'anyOf':
    case 'oneOf':
    case 'if':
      // The branch errors that led here say more; this summary adds nothing.
      return null;
    default:
      // Ajv's own words ("must …") for keywords our schemas do not use today.
      return { loc, msg: error.message ? `Input ${error.message}` : 'Invalid value', type: 'value_error' };
  }
}

/** Ajv errors → FastAPI `detail` items, without duplicates. */
export function ajvIssues(errors: ErrorObject[], part: string): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  // A nullable field reports both "not a string" and "not null": keep the first per place.
  for (const error of errors) {
    const issue = issueFor(error, part);
    if (!issue) continue;
    const key = `${JSON.stringify(issue.loc)}|${error.keyword === 'type' ? 'type' : issue.type}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

/** Query strings and path parameters with NUL bytes are refused like bodies. */
export function checkTextParts(parts: Record<string, unknown>, partName: string): void {
  const issues: ValidationIssue[] = [];
  for (const [key, value] of Object.entries(parts)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && v.includes('\u0000'))) {
      issues.push({
        loc: [partName, partName === 'path' ? wildcardNamed(key) : key],
        msg: 'String should not contain the NUL character (\\u0000)',
        type: 'string_nul_character',
      });
    }
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

const bodyValidators = new WeakMap<object, ValidateFunction>();

/** Checks a body assembled outside Fastify's parsing (a multipart form's fields) against a route's schema; 422 as for any body. */
export function checkBody(schema: object, value: unknown): void {
  let validate = bodyValidators.get(schema);
  if (!validate) bodyValidators.set(schema, (validate = bodyAjv.compile(schema) as ValidateFunction));
  if (!validate(value)) throw new ValidationError(ajvIssues(validate.errors ?? [], 'body'));
}
