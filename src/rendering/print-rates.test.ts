import { describe, expect, it } from 'vitest';
import { PrintRates } from './print-rates.js';

describe('PrintRates', () => {
  it('estimates with the starting figure until a long document was printed, then with the fastest rate seen', () => {
    const rates = new PrintRates({ tagged: 120, untagged: 50 });
    rates.observe(true, 900, 3); // too short: its fixed cost would count as pages
    expect(rates.perPage(true)).toBe(120);
    rates.observe(true, 600, 20);
    expect(rates.perPage(true)).toBe(30);
    rates.observe(true, 2000, 20); // a loaded moment does not raise it
    expect(rates.perPage(true)).toBe(30);
    expect(rates.perPage(false)).toBe(50);
  });

  it('estimates nothing when the starting figure is 0', () => {
    const rates = new PrintRates({ tagged: 0, untagged: 0 });
    rates.observe(true, 600, 20);
    expect(rates.perPage(true)).toBe(0);
  });
});
