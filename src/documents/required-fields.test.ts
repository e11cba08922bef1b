import { describe, expect, it } from 'vitest';
import { ValidationError } from '../shared/errors.js';
import type { FieldDefinition } from '../templates/field-inference.js';
import { checkRequiredFields, missingRequiredFields } from './required-fields.js';

const field = (key: string, required = true): FieldDefinition => ({
  key,
  label: key,
  type: 'string',
  required,
  helpText: null,
  spec: null,
});
const FIELDS = [
  field('number'),
  field('customer.name'),
  field('items'),
  field('note', false),
  field('einvoice.number'),
];

describe('required fields', () => {
  it.each([
    [
      'all present, nested or dotted',
      { number: 'RE-1', customer: { name: 'Ada' }, items: [], 'einvoice.number': 'x' },
      [],
    ],
    [
      'a dotted key counts as the nested one',
      { number: 1, 'customer.name': 'Ada', items: [{}], einvoice: { number: 'x' } },
      [],
    ],
    [
      'missing, null and "" are missing; 0, false and [] are values',
      { number: 0, customer: { name: '' }, items: null },
      ['customer.name', 'items', 'einvoice.number'],
    ],
    [
      'a scalar where an object belongs',
      { number: 'x', customer: 'Ada', items: [] },
      ['customer.name', 'einvoice.number'],
    ],
    ['nothing at all', {}, ['number', 'customer.name', 'items', 'einvoice.number']],
  ])('%s', (_name, data, missing) => {
    expect(missingRequiredFields(FIELDS, data)).toEqual(missing);
  });

  it('never counts what the service provides (an e-invoice) as missing', () => {
    expect(missingRequiredFields(FIELDS, { number: 1, customer: { name: 'A' }, items: [] }, ['einvoice'])).toEqual([]);
  });

  it('a strict template refuses with 422 naming every missing key; a lenient one warns once per key', () => {
    const data = { number: 'RE-1', items: [], einvoice: { number: 'x' } };
    expect(checkRequiredFields({ fields: FIELDS, strict: false }, data)).toEqual([
      { code: 'MISSING_REQUIRED_FIELD', message: expect.stringContaining('"customer.name" is a required field') },
    ]);
    let refused: unknown;
    try {
      checkRequiredFields({ fields: FIELDS, strict: true }, {});
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).issues.map((i) => i.loc)).toEqual([
      ['body', 'data', 'number'],
      ['body', 'data', 'customer.name'],
      ['body', 'data', 'items'],
      ['body', 'data', 'einvoice.number'],
    ]);
    expect((refused as ValidationError).issues[0]).toEqual({
      loc: ['body', 'data', 'number'],
      msg: 'Field required by the template',
      type: 'missing',
    });
    expect(
      checkRequiredFields(
        { fields: FIELDS, strict: true },
        { number: 1, customer: { name: 'A' }, items: [], einvoice: { number: 1 } },
      ),
    ).toEqual([]);
  });
});
