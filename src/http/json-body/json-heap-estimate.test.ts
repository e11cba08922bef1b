/**
 * The heap estimate counts JSON's structure, not characters inside strings; whether the estimate holds
 * against real parse threads is json-parse-pool.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { jsonParseHeapEstimate } from './json-heap-estimate.js';

const estimate = (text: string) => jsonParseHeapEstimate(Buffer.from(text, 'utf8'));

describe('jsonParseHeapEstimate', () => {
  it('grows with the structure, not only the length', () => {
    const flat = '"' + 'x'.repeat(2_999) + '"';
    const nested = '[' + '[],'.repeat(999) + '[]]';
    expect(flat.length).toBe(nested.length);
    expect(estimate(nested)).toBeGreaterThan(10 * estimate(flat));
  });

  it('does not count brackets, commas or escaped quotes inside strings', () => {
    const inString = JSON.stringify('[{,:}] \\" [{,:}]'.repeat(100));
    const plain = JSON.stringify('abcdefghijklmnop'.repeat(100));
    expect(estimate(inString)).toBe(estimate(plain.slice(0, 1) + 'a'.repeat(inString.length - 2) + plain.slice(-1)));
  });

  it('counts an object, an array, a member and a string each', () => {
    const base = estimate('[1]');
    expect(estimate('[1,2]')).toBeGreaterThan(base);
    expect(estimate('[{}]')).toBeGreaterThan(estimate('[11]'));
    expect(estimate('[[]]')).toBeGreaterThan(estimate('[11]'));
    expect(estimate('["a"]')).toBeGreaterThan(estimate('[111]'));
  });
});
