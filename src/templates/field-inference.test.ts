import { describe, expect, it } from 'vitest';
import { humanize, inferFields } from './field-inference.js';

const fields = (html: string, sample?: unknown) => inferFields([html], sample);
const byKey = (html: string) => Object.fromEntries(fields(html).map((f) => [f.key, f]));

describe('field inference', () => {
  it.each([
    ['a plain variable is a required string', '{{ name }}', { key: 'name', type: 'string', required: true }],
    [
      'a nested object is flattened into a dotted key',
      '{{ customer.address.city }}',
      { key: 'customer.address.city', type: 'string' },
    ],
    ['arithmetic makes a number', '{{ price * 2 }}', { key: 'price', type: 'number' }],
    ['the round filter makes a number', '{{ total | round(2) }}', { key: 'total', type: 'number' }],
    ['the int filter makes an integer', '{{ count | int }}', { key: 'count', type: 'integer' }],
    [
      'a bare condition makes an optional boolean',
      '{% if paid %}PAID{% endif %}',
      { key: 'paid', type: 'boolean', required: false },
    ],
    ['the default filter makes a field optional', '{{ note | default("-") }}', { key: 'note', required: false }],
    [
      'an is-defined test makes a field optional',
      '{% if vat is defined %}{{ vat }}{% endif %}',
      { key: 'vat', required: false },
    ],
    ['a numeric comparison makes a number', '{% if score > 3 %}hi{% endif %}', { key: 'score', type: 'number' }],
    ['a list filter makes an array', '{{ tags | join(", ") }}', { key: 'tags', type: 'array' }],
    [
      "a namespace is the template's own, not a field",
      '{% set ns = namespace(total=0) %}{% for i in lines %}{% set ns.total = ns.total + i.qty %}{% endfor %}{{ ns.total }}',
      { key: 'lines', type: 'array', spec: [{ name: 'qty', label: 'Qty', type: 'text' }] },
    ],
    ['selectattr makes an array', '{{ rows | selectattr("paid") | list | length }}', { key: 'rows', type: 'array' }],
  ])('%s', (_name, html, expected) => {
    expect(fields(html)).toEqual([expect.objectContaining(expected)]);
  });

  it('turns a for loop into an array field whose spec lists the item attributes used', () => {
    const f = byKey(
      '{% for item in items %}{{ loop.index }} {{ item.description }} {{ item.qty * item.price }}{% for t in item.tags %}{{ t }}{% endfor %}{% endfor %}',
    );
    expect(Object.keys(f)).toEqual(['items']);
    expect(f.items).toMatchObject({ type: 'array', required: true });
    expect(f.items!.spec).toEqual([
      { name: 'description', label: 'Description', type: 'text' },
      { name: 'qty', label: 'Qty', type: 'number' },
      { name: 'price', label: 'Price', type: 'number' },
      { name: 'tags', label: 'Tags', type: 'array' },
    ]);
  });

  it('does not report names bound in the template or globals', () => {
    const f = byKey(
      '{% set greeting = "hi" %}{{ greeting }}{% macro row(label, value="x") %}{{ label }}{{ value }}{{ caller() }}{% endmacro %}' +
        '{% for i in range(0, 3) %}{{ i }}{{ loop.index }}{% endfor %}{{ row(title) }}{% for k, v in mapping %}{{ k }}{{ v }}{% endfor %}',
    );
    expect(Object.keys(f).sort()).toEqual(['mapping', 'title']);
  });

  it('gives an example from the sample data as help text', () => {
    expect(fields('{{ invoice.number }}', { invoice: { number: 'INV-7' } })[0]!.helpText).toBe('Example: INV-7');
  });

  it('reads css, header and footer sources too', () => {
    expect(inferFields(['{{ a }}', '.x{color:{{ brand.color }}}', '{{ h }}', '{{ f }}']).map((f) => f.key)).toEqual([
      'a',
      'brand.color',
      'h',
      'f',
    ]);
  });

  it('labels keys for people', () => {
    expect(humanize('invoice.issue_date')).toBe('Invoice issue date');
    expect(humanize('unitPrice')).toBe('Unit price');
  });
});
