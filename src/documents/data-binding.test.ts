import { describe, expect, it } from 'vitest';
import { expandDottedKeys } from './data-binding.js';

describe('data binding', () => {
  it('expands dotted keys into nested objects, in arrays too', () => {
    expect(expandDottedKeys({ 'customer.name': 'Ada', 'customer.address.city': 'Paris', items: [{ 'price.amount': 3 }] })).toEqual({
      customer: { name: 'Ada', address: { city: 'Paris' } },
      items: [{ price: { amount: 3 } }],
    });
  });

  it('lets an explicit nested value win over a dotted one', () => {
    expect(expandDottedKeys({ customer: { name: 'Nested' }, 'customer.name': 'Dotted', 'customer.city': 'Lyon' })).toEqual({ customer: { name: 'Nested', city: 'Lyon' } });
    expect(expandDottedKeys({ total: 5, 'total.x': 1 })).toEqual({ total: 5 });
  });

  it('keeps malformed dotted keys as they are and never touches prototypes', () => {
    const out = expandDottedKeys(JSON.parse('{".a": 1, "b.": 2, "c..d": 3, "constructor.prototype.x": 4}')) as Record<string, unknown>;
    expect(out['.a']).toBe(1);
    expect(out['b.']).toBe(2);
    expect(out['c..d']).toBe(3);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(out, 'constructor')).toBe(true);
  });
});
