import { describe, expect, it } from 'vitest';
import { MAX_WARNINGS, RenderWarnings } from './render-warnings.js';

describe('RenderWarnings', () => {
  it('answers in a stable order whatever order the resources finished in: template warnings as they came, then by URL', () => {
    const lists = [
      ['https://b.example/2.png', 'https://a.example/1.png'],
      ['https://a.example/1.png', 'https://b.example/2.png'],
    ].map((urls) => {
      const warnings = new RenderWarnings();
      warnings.add({ code: 'UNDEFINED_VARIABLE', message: 'second' });
      for (const url of urls) warnings.add({ code: 'RESOURCE_FAILED', message: 'failed', url });
      warnings.add({ code: 'INVALID_NUMBER', message: 'first' });
      return warnings.list();
    });
    expect(lists[0]).toEqual(lists[1]);
    expect(lists[0]!.map((w) => w.url ?? w.code)).toEqual([
      'UNDEFINED_VARIABLE',
      'INVALID_NUMBER',
      'https://a.example/1.png',
      'https://b.example/2.png',
    ]);
  });

  it('keeps a repeated warning once, and says how many were left out past the cap', () => {
    const warnings = new RenderWarnings();
    for (let i = 0; i < MAX_WARNINGS + 5; i += 1) {
      warnings.add({
        code: 'RESOURCE_FAILED',
        message: 'failed',
        url: `https://example.com/${String(i).padStart(3, '0')}.png`,
      });
      warnings.add({
        code: 'RESOURCE_FAILED',
        message: 'failed',
        url: `https://example.com/${String(i).padStart(3, '0')}.png`,
      });
    }
    const list = warnings.list();
    expect(list).toHaveLength(MAX_WARNINGS + 1);
    expect(list.at(-1)).toEqual({ code: 'MORE_WARNINGS', message: '5 more warnings were left out.' });
  });
});
