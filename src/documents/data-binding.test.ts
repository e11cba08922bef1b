import { describe, expect, it } from 'vitest';
import { expandDottedKeys } from './data-binding.js';

describe('data binding', () => {
  it('expands dotted keys into nested objects, in arrays too', () => {
    expect(
      expandDottedKeys({ 'customer.name': 'Ada', 'customer.address.city': 'Paris', items: [{ 'price.amount': 3 }] }),
    ).toEqual({
      customer: { name: 'Ada', address: { city: 'Paris' } },
      items: [{ price: { amount: 3 } }],
    });
  });

  it('lets an explicit nested value win over a dotted one', () => {
    expect(
      expandDottedKeys({ customer: { name: 'Nested' }, 'customer.name': 'Dotted', 'customer.city': 'Lyon' }),
    ).toEqual({ customer: { name: 'Nested', city: 'Lyon' } });
    expect(expandDottedKeys({ total: 5, 'total.x': 1 })).toEqual({ total: 5 });
  });

  it('keeps malformed dotted keys as they are and never touches prototypes', () => {
    const out = expandDottedKeys(JSON.parse('{".a": 1, "b.": 2, "c..d": 3, "constructor.prototype.x": 4}')) as Record<
      string,
      unknown
    >;
    expect(out['.a']).toBe(1);
    expect(out['b.']).toBe(2);
    expect(out['c..d']).toBe(3);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(out, 'constructor')).toBe(true);
  });

  it('never changes the data it is given, and hands back data without dotted keys as it is', () => {
    const data = JSON.parse(
      '{"customer": {"name": "Nested", "address": {"city": "Paris"}}, "customer.address.zip": "75001", "items": [{"a": 1}], "__proto__": {"x": 1}}',
    );
    const before = structuredClone(data);
    const out = expandDottedKeys(data) as Record<string, any>;
    expect(out.customer).toEqual({ name: 'Nested', address: { city: 'Paris', zip: '75001' } });
    expect(data).toEqual(before);
    expect(data.customer.address.zip).toBeUndefined();
    expect(out.items).toBe(data.items); // unchanged parts are shared, not copied
    expect(Object.prototype.hasOwnProperty.call(out, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).x).toBeUndefined();

    const plain = JSON.parse('{"a": {"b": [1, {"c": 2}]}, "d": "e"}');
    expect(expandDottedKeys(plain)).toBe(plain);
  });
});
