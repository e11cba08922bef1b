/**
 * The template language as a document sees it, in real Chromium on both evaluators: the names a
 * document's environment holds are exactly the catalogue's supported ones, and the helpers print
 * what docs/templates.md says they print (evaluated HTML, through the renderer).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppError } from '../shared/errors.js';
import { createLogger } from '../shared/log.js';
import { launchChromium, type LaunchedChromium } from '../browser/launch-chromium.js';
import { openNetworkSinkhole, type NetworkSinkhole } from '../browser/pages/network-sinkhole.js';
import { EvaluatorPage } from '../browser/sandbox/evaluator-page.js';
import { testOptions } from '../../test/support/documents/rendering-kit.js';
import { LANGUAGE } from './catalogue.js';
import { compileTemplate } from './compiler.js';

const logger = createLogger(process.env.TEST_LOG ?? 'silent');
let sinkhole: NetworkSinkhole;
let chromium: LaunchedChromium;
let page: EvaluatorPage;

beforeAll(async () => {
  sinkhole = await openNetworkSinkhole();
  chromium = await launchChromium({
    executablePath: testOptions().chromiumPath,
    sinkholePort: sinkhole.port,
    protocolTimeoutMs: 30_000,
  });
  page = await EvaluatorPage.open(chromium.root, { logger });
});

afterAll(async () => {
  await page?.close();
  await chromium?.shutdown();
  await sinkhole?.close();
});

const limits = { timeoutMs: 10_000, limitChars: 1 << 20, limitBytes: 1 << 20, signal: new AbortController().signal };
/** Compiled-template-shaped code that prints the names of its environment's filters, tests and globals. */
const LIST_NAMES = `function root(env, context, frame, runtime, cb) { cb(null, JSON.stringify({ filter: Object.keys(env.filters), test: Object.keys(env.tests), global: Object.keys(env.globals) })); }\nreturn { root: root };`;

describe('a document in the evaluator', () => {
  it('has exactly the filters, tests and globals the catalogue lists as supported', async () => {
    const { html } = await page.evaluate({ main: LIST_NAMES }, '{}', limits);
    const seen = JSON.parse(html.main!) as Record<string, string[]>;
    for (const k of ['filter', 'test', 'global'] as const) {
      const expected = LANGUAGE.filter((e) => e.kind === k && e.support !== 'no')
        .map((e) => e.name)
        .sort();
      // What compiled code calls (the namespace setter `{% set ns.attr = … %}` compiles to, the check of
      // printed variables) is internal, not a name to offer.
      expect([...new Set(seen[k])].filter((n) => !n.startsWith('__pressroom_')).sort(), k).toEqual(expected);
    }
  });

  /** Jinja2 as TemplateFox and Flask users write it (issue 13), each with the exact text Jinja2 prints. */
  it.each([
    [
      'namespace() carries a total out of a loop',
      '{% set ns = namespace(total=0) %}{% for i in items %}{% set ns.total = ns.total + i.qty %}{% endfor %}{{ ns.total }}',
      '6',
    ],
    [
      'set on something that is not a namespace is refused',
      '{% set d = {"a": 1} %}{% set d.a = 2 %}',
      'ERROR: only attributes of a namespace() can be set',
    ],
    ['map with a filter', '{{ names | map("upper") | join(", ") }}', 'ADA, BOB'],
    ['map with an attribute', '{{ items | map(attribute="sku") | join(",") }}', 'a,b,c'],
    [
      'map with an attribute and a default',
      '{{ items | map(attribute="colour", default="-") | join(",") }}',
      'red,-,-',
    ],
    ['selectattr with a test', '{{ items | selectattr("qty", "gt", 1) | map(attribute="sku") | join(",") }}', 'b,c'],
    ['selectattr by truthiness', '{{ items | selectattr("colour") | map(attribute="sku") | join }}', 'a'],
    ['rejectattr with a test', '{{ items | rejectattr("sku", "eq", "b") | map(attribute="sku") | join(",") }}', 'a,c'],
    [
      'select and reject with a test',
      '{{ [1, 2, 3, 4] | select("odd") | join }}{{ [1, 2, 3, 4] | reject("odd") | join }}',
      '1324',
    ],
    ['tojson, HTML-safe', '{{ {"a": "<b>", "n": [1, 2]} | tojson }}', '{"a":"\\u003cb\\u003e","n":[1,2]}'],
    ['items', '{% for k, v in {"x": 1, "y": 2} | items %}{{ k }}={{ v }};{% endfor %}', 'x=1;y=2;'],
    ['unique', '{{ ["a", "A", "b", "a"] | unique | join }}', 'ab'],
    [
      'min and max with an attribute',
      '{{ (items | min(attribute="qty")).sku }}{{ (items | max(attribute="qty")).sku }}',
      'ac',
    ],
    [
      'sum with an attribute',
      '{{ items | sum(attribute="qty") }} {{ items | sum("qty", 10) }} {{ [1, 2] | sum }}',
      '6 16 3',
    ],
    ['dictsort', '{% for k, v in {"b": 1, "a": 2} | dictsort %}{{ k }}{% endfor %}', 'ab'],
    [
      'batch and slice',
      '{{ [1, 2, 3, 4, 5] | batch(2) | list | length }}/{{ [1, 2, 3, 4, 5] | slice(2) | list | length }}',
      '3/2',
    ],
    ['format', '{{ "%05.1f|%-4s|%x" | format(3.14159, "ab", 255) }}', '003.1|ab  |ff'],
    ['wordcount', '{{ "one two  three" | wordcount }}', '3'],
    ['indent', '{{ "a\nb" | indent(2) }}', 'a\n  b'],
    ['truncate', '{{ "Hello wonderful world" | truncate(9, true) }}', 'Hello won...'],
    ['default with boolean', '{{ "" | default("empty", true) }}{{ "" | d("never") }}', 'empty'],
    ['round methods', '{{ 2.5 | round }} {{ 2.1 | round(0, "ceil") }} {{ 2.19 | round(1, "floor") }}', '3 3 2.1'],
    ['int and float', '{{ "42" | int + 1 }} {{ "x" | int(7) }} {{ "1.5" | float * 2 }}', '43 7 3'],
    ['xmlattr', '<p{{ {"class": "a&b", "id": none, "title": "x"} | xmlattr }}>', '<p class="a&amp;b" title="x">'],
    ['count and attr', '{{ items | count }}{{ items[0] | attr("sku") }}', '3a'],
    [
      'filesizeformat',
      '{{ 1234567 | filesizeformat }} / {{ 1234567 | filesizeformat(true) }} / {{ 1 | filesizeformat }}',
      '1.2 MB / 1.2 MiB / 1 Byte',
    ],
    ['wordwrap', '{{ "aaa bbb ccc" | wordwrap(7) }}', 'aaa bbb\nccc'],
    [
      'tests Jinja2 has and nunjucks lacked',
      '{{ 1 is integer }}{{ 1.5 is float }}{{ none is none }}{{ true is boolean }}{{ 2 in [1, 2] }}{{ "upper" is filter }}{{ "odd" is test }}{{ false is false }}{{ [] is sequence }}',
      'truetruetruetruetruetruetruetruetrue',
    ],
    ['dict()', '{{ dict(a=1, b="x") | tojson }}', '{"a":1,"b":"x"}'],
    // Pressroom's helpers (docs/templates.md#helpers). Intl puts a no-break space between amount and unit.
    ['format_currency in German', '{{ 1234.56 | format_currency("EUR", "de-DE") }}', '1.234,56\u00a0€'],
    [
      'format_currency in US English',
      '{{ 1234.56 | format_currency("USD", "en-US") }}|{{ "1234.5" | format_currency("USD") }}',
      '$1,234.56|$1,234.50',
    ],
    [
      'format_number with decimals, Babel-style locale',
      '{{ 1234.5 | format_number("de_DE", 2) }}|{{ 1234567.891 | format_number("en-US") }}',
      '1.234,50|1,234,567.891',
    ],
    [
      'format_percent',
      '{{ 0.19 | format_percent("de-DE") }}|{{ 0.075 | format_percent("en-US", 1) }}',
      '19\u00a0%|7.5%',
    ],
    [
      'format_date and format_datetime (UTC unless a time zone is given)',
      '{{ "2026-11-24" | format_date("long", "de-DE") }}|{{ "2026-11-24T15:30:00Z" | format_datetime("short", "en-GB", "Europe/Berlin") }}',
      '24. November 2026|24/11/2026, 16:30',
    ],
    [
      'the locale of the document: a variable, or {% set %}',
      '{{ 2.5 | format_number }}|{% set locale = "fr-FR" %}{{ 1234.5 | format_number }}',
      '2.5|1\u202f234,5',
    ],
    ['a currency variable', '{% set currency = "CHF" %}{{ 10 | format_currency(locale="de-CH") }}', 'CHF\u00a010.00'],
    [
      'format_currency without a currency is an error',
      '{{ 10 | format_currency }}',
      'ERROR: format_currency needs a currency code',
    ],
    [
      'markdown, with its HTML printed as text and script links dropped',
      '{{ "**Net 30** <b>x</b> [pay](javascript:alert(1)) [site](https://example.com)" | markdown }}',
      '<p><strong>Net 30</strong> &lt;b&gt;x&lt;/b&gt; [pay](javascript:alert(1)) <a href="https://example.com">site</a></p>\n',
    ],
    [
      'an invalid barcode is an error naming the problem',
      '{{ "123" | barcode("ean13") }}',
      'ERROR: ean13: EAN-13 must be 12 or 13 digits',
    ],
    ['an unknown barcode type is an error', '{{ "123" | barcode("nope") }}', 'ERROR: unknown barcode type "nope"'],
    ['sepa_qrcode checks the IBAN', '{{ sepa_qrcode(iban="DE00", name="A", amount=1) }}', 'ERROR: is not an IBAN'],
  ])('%s', async (_name, source, expected) => {
    const data = JSON.stringify({
      names: ['Ada', 'Bob'],
      items: [
        { sku: 'a', qty: 1, colour: 'red' },
        { sku: 'b', qty: 2 },
        { sku: 'c', qty: 3 },
      ],
    });
    try {
      const { html } = await page.evaluate({ main: compileTemplate(source) }, data, limits);
      expect(html.main).toBe(expected);
      expect(String(expected)).not.toMatch(/^ERROR: /);
    } catch (error) {
      if (!String(expected).startsWith('ERROR: ')) throw error;
      expect((error as Error).message).toContain(expected.slice(7));
    }
  });

  it('a barcode and a QR code are inline SVG; sepa_qrcode holds the EPC payment text', async () => {
    const source =
      '{{ "4006381333931" | barcode("ean13", includetext=true) }}{{ "https://example.com/i/42" | qrcode(width="30mm") }}{{ sepa_qrcode(iban="DE89 3704 0044 0532 0130 00", name="Pressroom GmbH", amount=1234.5, reference="RE-2026-001") }}';
    const { html } = await page.evaluate({ main: compileTemplate(source) }, '{}', limits);
    const svgs = html.main!.match(/<svg [^>]*>/g) ?? [];
    expect(svgs).toHaveLength(3);
    expect(svgs[0]).toMatch(/class="pressroom-barcode" role="img" aria-label="ean13" width="\d+/);
    expect(svgs[1]).toContain('style="width:30mm;height:auto"');
    expect(html.main).toMatch(/<path d="M/);
  });

  it('a text where a number belongs prints as it was sent, with a warning naming the filter and the part', async () => {
    const source =
      '{{ price | format_currency("EUR", "de-DE") }}|{{ missing | format_number }}|{{ "yesterday" | format_date }}';
    const { html, warnings } = await page.evaluate(
      { main: compileTemplate(source) },
      JSON.stringify({ price: '1.234,56' }),
      limits,
    );
    expect(html.main).toBe('1.234,56||yesterday');
    expect(warnings.map((w) => w.code)).toEqual(['INVALID_NUMBER', 'INVALID_DATE']);
    expect(warnings[0]!.message).toMatch(/format_currency: "1\.234,56" is not a number.*\(in the HTML\)/);
  });

  it('an undefined variable prints nothing, with a warning naming it and its place; null, loop, set and macro names print without a word', async () => {
    const source =
      'Dear {{ customer.name }},\n  {{ items[0].sku }}{{ items[5].sku }}|{{ note }}|{{ customer.vat_id }}|{% for i in items %}{{ loop.index }}{{ i.colour }}{% endfor %}|{{ customer.name | default("-") }}{% set total = 3 %}{{ total }}{% macro line(label, value="-") %}{{ label }}{{ value }}{% endmacro %}{{ line("x") }}';
    const data = { note: null, customer: { vat_id: null }, items: [{ sku: 'a', colour: 'red' }, { sku: 'b' }] };
    const { html, warnings } = await page.evaluate({ main: compileTemplate(source) }, JSON.stringify(data), limits);
    expect(html.main).toBe('Dear ,\n  a|||1red2|-3x-');
    expect(warnings).toEqual([
      {
        code: 'UNDEFINED_VARIABLE',
        message: '"customer.name" is not in the data (line 1, column 9); printed as nothing (in the HTML)',
      },
      {
        code: 'UNDEFINED_VARIABLE',
        message: '"items[5].sku" is not in the data (line 2, column 24); printed as nothing (in the HTML)',
      },
      {
        code: 'UNDEFINED_VARIABLE',
        message: '"i.colour" is not in the data (line 2, column 112); printed as nothing (in the HTML)',
      },
    ]);
  });

  it('a strict template fails at an undefined variable, naming it and its place; null and default() still print nothing', async () => {
    const strict = { ...limits, strict: true };
    const ok = await page.evaluate(
      { main: compileTemplate('{{ note }}|{{ missing | default("-") }}|{% if missing %}x{% endif %}') },
      '{"note": null}',
      strict,
    );
    expect(ok).toMatchObject({ html: { main: '|-|' }, warnings: [] });
    const failure = await page
      .evaluate({ main: compileTemplate('<p>\n  Dear {{ customer.name }}</p>') }, '{"customer": {}}', strict)
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'TEMPLATE_RENDER_ERROR' });
    expect((failure as AppError).details).toEqual({ part: 'html', line: 2, column: 11 });
    expect((failure as Error).message).toMatch(
      /^Template error \(line 2, column 11\): "customer\.name" is not in the data, and this template is strict/,
    );
    // A text where a number belongs is an error too.
    const number = await page
      .evaluate({ main: compileTemplate('{{ total | format_currency("EUR") }}') }, '{"total": "1.234,56"}', strict)
      .catch((error: unknown) => error);
    expect(number).toMatchObject({
      code: 'TEMPLATE_RENDER_ERROR',
      message: expect.stringContaining('format_currency: "1.234,56" is not a number'),
    });
  });
});
