import { describe, expect, it } from 'vitest';
import { compileFilenameTemplate, FilenameTemplateError, sanitizeFilename } from './filename-template.js';

describe('--filename templates', () => {
  it.each([
    { template: '{{ invoice_number }}', data: { invoice_number: 'INV-1' }, name: 'INV-1' },
    { template: '{{invoice_number}}', data: { invoice_number: 7 }, name: '7' },
    {
      template: 'invoice-{{ n }}-{{ customer.name }}',
      data: { n: 3, customer: { name: 'Ada Lovelace' } },
      name: 'invoice-3-Ada_Lovelace',
    },
    { template: '{{ customer.name }}', data: { 'customer.name': 'flat CSV header' }, name: 'flat_CSV_header' },
    { template: '{{ a }}', data: { a: 'ré/../sumé: 2024?' }, name: 'r_.._sum_2024_' },
    { template: '{{ a }}.pdf', data: { a: 'x' }, name: 'x' },
    { template: '{{ ok }}', data: { ok: true }, name: 'true' },
    { template: 'fixed', data: {}, name: 'fixed' },
  ])('$template on $data → $name', ({ template, data, name }) => {
    expect(compileFilenameTemplate(template).nameFor(data)).toBe(name);
  });

  it('cuts a long name to the API’s 100 characters', () => {
    expect(compileFilenameTemplate('{{ a }}').nameFor({ a: 'x'.repeat(300) })).toBe('x'.repeat(100));
  });

  it.each([
    ['{{ a | upper }}', /only \{\{ dotted.key \}\}/],
    ['{{ a + b }}', /only \{\{ dotted.key \}\}/],
    ['{% if a %}x{% endif %}{{', /only \{\{ dotted.key \}\}/],
    ['', /1 to 1000 characters/],
  ])('refuses %j', (template, message) => {
    expect(() => compileFilenameTemplate(template)).toThrow(message);
  });

  it.each([
    [{}, '{{ invoice_number }} has no value'],
    [{ invoice_number: '' }, '{{ invoice_number }} has no value'],
    [{ invoice_number: null }, '{{ invoice_number }} has no value'],
    [{ invoice_number: { a: 1 } }, '{{ invoice_number }} is an object'],
    [{ invoice_number: [1] }, '{{ invoice_number }} is a list'],
  ])('a row %j cannot be named: %s', (data, message) => {
    const template = compileFilenameTemplate('{{ invoice_number }}');
    expect(() => template.nameFor(data)).toThrow(FilenameTemplateError);
    expect(() => template.nameFor(data)).toThrow(message);
  });

  it('finds own keys only: prototype names have no value', () => {
    const template = compileFilenameTemplate('{{ constructor.name }}');
    expect(() => template.nameFor({})).toThrow('has no value');
  });

  it.each(['', '..', '.pdf'])('a name %j with nothing usable is refused', (name) => {
    expect(() => sanitizeFilename(name)).toThrow(FilenameTemplateError);
  });
});
