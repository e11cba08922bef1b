/**
 * The 422 messages a client reads: each keyword's wording, checked through the same compiler the app
 * uses, as plain English ("a valid object", "1 item", "2 properties").
 */
import { describe, expect, it } from 'vitest';
import { AjvValidationError, ajvIssues, validatorCompiler } from './validation.js';

/** The `detail` items for `data` checked against `schema` as a request body (or `part`). */
function detailFor(schema: object, data: unknown, part = 'body') {
  const validate = validatorCompiler({ schema, httpPart: part, method: 'POST', url: '/' } as never) as (d: unknown) => {
    error?: AjvValidationError;
  };
  const { error } = validate(data);
  if (!error) throw new Error('expected a validation failure');
  return ajvIssues(error.errors, error.httpPart);
}

describe('422 messages', () => {
  const cases: { name: string; schema: object; data: unknown; msg: string; type: string }[] = [
    { name: 'object', schema: { type: 'object' }, data: 5, msg: 'Input should be a valid object', type: 'dict_type' },
    { name: 'array', schema: { type: 'array' }, data: 5, msg: 'Input should be a valid array', type: 'list_type' },
    {
      name: 'integer',
      schema: { type: 'integer' },
      data: 1.5,
      msg: 'Input should be a valid integer',
      type: 'int_type',
    },
    { name: 'string', schema: { type: 'string' }, data: 5, msg: 'Input should be a valid string', type: 'string_type' },
    {
      name: 'boolean',
      schema: { type: 'boolean' },
      data: 5,
      msg: 'Input should be a valid boolean',
      type: 'bool_type',
    },
    {
      name: 'nullable string',
      schema: { type: ['string', 'null'] },
      data: 5,
      msg: 'Input should be a valid string',
      type: 'string_type',
    },
    { name: 'null', schema: { type: 'null' }, data: 5, msg: 'Input should be null', type: 'none_required' },
    {
      name: 'maximum',
      schema: { type: 'integer', maximum: 10 },
      data: 11,
      msg: 'Input should be less than or equal to 10',
      type: 'less_than_equal',
    },
    {
      name: 'exclusiveMaximum',
      schema: { type: 'integer', exclusiveMaximum: 10 },
      data: 10,
      msg: 'Input should be less than 10',
      type: 'less_than',
    },
    {
      name: 'minLength 1',
      schema: { type: 'string', minLength: 1 },
      data: '',
      msg: 'String should have at least 1 character',
      type: 'string_too_short',
    },
    {
      name: 'maxLength 2',
      schema: { type: 'string', maxLength: 2 },
      data: 'abc',
      msg: 'String should have at most 2 characters',
      type: 'string_too_long',
    },
    {
      name: 'minItems 1',
      schema: { type: 'array', minItems: 1 },
      data: [],
      msg: 'List should have at least 1 item',
      type: 'too_short',
    },
    {
      name: 'maxProperties 1',
      schema: { type: 'object', maxProperties: 1 },
      data: { a: 1, b: 2 },
      msg: 'Object should have at most 1 property',
      type: 'too_long',
    },
    {
      name: 'maxProperties 2',
      schema: { type: 'object', maxProperties: 2 },
      data: { a: 1, b: 2, c: 3 },
      msg: 'Object should have at most 2 properties',
      type: 'too_long',
    },
    {
      name: 'email format',
      schema: { type: 'string', format: 'email' },
      data: 'nope',
      msg: 'Input should be a valid email address',
      type: 'value_error',
    },
    {
      name: 'enum',
      schema: { type: 'string', enum: ['a', 'b', 'c'] },
      data: 'x',
      msg: "Input should be 'a', 'b' or 'c'",
      type: 'enum',
    },
  ];
  it.each(cases)('$name: "$msg"', ({ schema, data, msg, type }) => {
    expect(detailFor(schema, data)).toEqual([expect.objectContaining({ loc: ['body'], msg, type })]);
  });

  it('never writes "an valid" for any JSON type', () => {
    for (const type of ['object', 'array', 'integer', 'number', 'string', 'boolean']) {
      const value = type === 'string' ? 5 : 'x';
      for (const issue of detailFor({ type }, value)) expect(issue.msg).not.toMatch(/\ban valid\b/);
    }
  });

  it('names the query parameter and the bound in a query string', () => {
    const detail = detailFor(
      { type: 'object', properties: { offset: { type: 'integer', maximum: 1000 } } },
      { offset: '1e21' },
      'querystring',
    );
    expect(detail).toEqual([
      {
        loc: ['query', 'offset'],
        msg: 'Input should be less than or equal to 1000',
        type: 'less_than_equal',
        ctx: { le: 1000 },
      },
    ]);
  });
});
