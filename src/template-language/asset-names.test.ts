/**
 * Which asset names a template's text names (issue 50): literal `asset()` calls in any part, and
 * every other use of `asset` read as "may name any asset" (what a version then pins).
 */
import { describe, expect, it } from 'vitest';
import { MAX_NAMED_ASSETS } from './asset-names.js';
import { assetNamesOf } from './compiler.js';

describe('assetNamesOf', () => {
  it.each([
    ['a literal call', [`<img src="{{ asset('logo.svg') }}">`], { names: ['logo.svg'], computed: false }],
    [
      'double quotes, a filter, a macro body, the CSS and the footer',
      [
        `{% macro m() %}{{ asset("fonts/brand.woff2") | e }}{% endmacro %}`,
        `body { background: url("{{ asset('bg.png') }}") }`,
        null,
        `<img src="{{ asset('logo.svg') }}">`,
      ],
      { names: ['bg.png', 'fonts/brand.woff2', 'logo.svg'], computed: false },
    ],
    ['no asset at all', ['<p>{{ customer.name }}</p>', '', undefined], { names: [], computed: false }],
    [
      'the word in text, a comment and a data key',
      ['<p>asset management</p>{# asset(x) is not a call #}{{ data.asset }}'],
      { names: [], computed: false },
    ],
    ['a computed name', [`{{ asset(data.logo) }}`], { names: [], computed: true }],
    ['a concatenated name', [`{{ asset('logos/' ~ brand) }}`], { names: [], computed: true }],
    ['the function handed around', [`{% set a = asset %}{{ a('logo.svg') }}`], { names: [], computed: true }],
    [
      'an asset URL written out',
      [`<img src="https://assets.pressroom.internal/a/logo.svg">`],
      { names: [], computed: true },
    ],
    [
      'a part naming assets that does not parse',
      [`{{ asset('logo.svg') }}`, `{% if %}{{ asset('x.png') }}`],
      { names: [], computed: true },
    ],
  ])('%s', (_case, sources, expected) => {
    expect(assetNamesOf(sources)).toEqual(expected);
  });

  it(`reads more than ${MAX_NAMED_ASSETS} distinct names as computed`, () => {
    const many = Array.from({ length: MAX_NAMED_ASSETS + 1 }, (_, i) => `{{ asset('a${i}.png') }}`).join('');
    expect(assetNamesOf([many])).toEqual({ names: [], computed: true });
    const enough = Array.from({ length: MAX_NAMED_ASSETS }, (_, i) => `{{ asset('a${i}.png') }}`).join('');
    expect(assetNamesOf([enough]).names).toHaveLength(MAX_NAMED_ASSETS);
  });
});
