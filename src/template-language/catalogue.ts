/**
 * THE list of the template language's filters, tests and globals: every Jinja2 built-in (3.1) with
 * what Pressroom does with it, plus Pressroom's own helpers. Read by the save-time check (an unknown
 * filter is refused), by field inference (which filters make a field a number, a list, optional;
 * which names are globals, not fields), and by docs/templates.md, whose table a test compares with
 * this list. The browser runtime (`browser/language.ts`) implements the `pressroom` entries; a test
 * checks that a document's environment holds exactly the supported names.
 */

/** `nunjucks`: nunjucks' own; `pressroom`: added or corrected by Pressroom; `no`: not offered (`note` says why). */
export type Support = 'nunjucks' | 'pressroom' | 'no';

/** What a filter says about the variable it is applied to (field inference). */
export type FieldHint = 'number' | 'integer' | 'array' | 'optional';

export interface LanguageEntry {
  name: string;
  kind: 'filter' | 'test' | 'global';
  /** A Jinja2 built-in (false: Pressroom's or nunjucks' own). */
  jinja2: boolean;
  support: Support;
  /** Differences from Jinja2, or why it is not offered. */
  note?: string;
  fieldHint?: FieldHint;
}

type Row = [name: string, support: Support, note?: string, fieldHint?: FieldHint];

const JINJA2_FILTERS: Row[] = [
  ['abs', 'nunjucks', undefined, 'number'],
  ['attr', 'pressroom', '`x|attr("name")`, the same as `x.name`'],
  ['batch', 'nunjucks', undefined, 'array'],
  ['capitalize', 'nunjucks'],
  ['center', 'nunjucks'],
  ['count', 'pressroom', 'the same as `length`'],
  ['d', 'nunjucks', '`d(value, boolean)` as in Jinja2', 'optional'],
  ['default', 'nunjucks', '`default(value, boolean)` as in Jinja2', 'optional'],
  ['dictsort', 'nunjucks', undefined, 'array'],
  ['e', 'nunjucks'],
  ['escape', 'nunjucks'],
  ['filesizeformat', 'pressroom', '`1234567|filesizeformat` → `1.2 MB`; `(…, true)` → `1.2 MiB`', 'number'],
  ['first', 'nunjucks', undefined, 'array'],
  ['float', 'nunjucks', undefined, 'number'],
  ['forceescape', 'nunjucks'],
  ['format', 'pressroom', 'printf style: `"%.2f"|format(x)`, `"%(n)d"|format(n=3)`'],
  ['groupby', 'nunjucks', undefined, 'array'],
  ['indent', 'nunjucks'],
  ['int', 'nunjucks', undefined, 'integer'],
  ['items', 'pressroom', '`{% for k, v in d|items %}`'],
  ['join', 'nunjucks', undefined, 'array'],
  ['last', 'nunjucks', undefined, 'array'],
  ['length', 'nunjucks'],
  ['list', 'nunjucks', undefined, 'array'],
  ['lower', 'nunjucks'],
  ['map', 'pressroom', '`map("upper")` (a filter and its arguments) or `map(attribute="a.b", default=…)`', 'array'],
  ['max', 'pressroom', '`case_sensitive`, `attribute`', 'array'],
  ['min', 'pressroom', '`case_sensitive`, `attribute`', 'array'],
  ['pprint', 'no', 'a debugging aid; use `tojson`'],
  ['random', 'nunjucks', 'documents should print the same every time: prefer a value from the data', 'array'],
  ['reject', 'nunjucks', undefined, 'array'],
  ['rejectattr', 'pressroom', 'with a test as in Jinja2: `rejectattr("qty", "gt", 2)`; dotted attributes', 'array'],
  ['replace', 'nunjucks'],
  ['reverse', 'nunjucks', undefined, 'array'],
  ['round', 'nunjucks', undefined, 'number'],
  ['safe', 'nunjucks'],
  ['select', 'nunjucks', undefined, 'array'],
  [
    'selectattr',
    'pressroom',
    'with a test as in Jinja2: `selectattr("status", "eq", "paid")`; dotted attributes',
    'array',
  ],
  ['slice', 'nunjucks', undefined, 'array'],
  ['sort', 'nunjucks', undefined, 'array'],
  ['string', 'nunjucks'],
  ['striptags', 'nunjucks'],
  ['sum', 'pressroom', '`attribute` and `start` by name or position', 'array'],
  ['title', 'nunjucks'],
  ['tojson', 'pressroom', "HTML-safe (`<`, `>`, `&`, `'` as `\\u` escapes), optional indent"],
  ['trim', 'nunjucks'],
  ['truncate', 'nunjucks'],
  ['unique', 'pressroom', '`case_sensitive`, `attribute`', 'array'],
  ['upper', 'nunjucks'],
  ['urlencode', 'nunjucks'],
  ['urlize', 'nunjucks'],
  ['wordcount', 'nunjucks'],
  ['wordwrap', 'pressroom', '`width`, `break_long_words`, `wrapstring` (positional)'],
  ['xmlattr', 'pressroom', 'skips null and undefined values, escapes values'],
];

/** Filters nunjucks has beyond Jinja2's, and Pressroom's helpers (docs/templates.md#helpers). */
const OTHER_FILTERS: Row[] = [
  [
    'barcode',
    'pressroom',
    '`sku|barcode("ean13")`: an inline SVG barcode (qrcode, code128, code39, ean13, ean8, upca, itf14, interleaved2of5, gs1_128, datamatrix, pdf417, azteccode, swissqrcode)',
  ],
  ['dump', 'nunjucks', 'JSON text, like `tojson`'],
  ['format_currency', 'pressroom', '`1234.56|format_currency("EUR", "de-DE")` → `1.234,56 €`', 'number'],
  ['format_date', 'pressroom', '`"2026-11-24"|format_date("long", "de-DE")` → `24. November 2026`'],
  ['format_datetime', 'pressroom', '`ts|format_datetime("short", "en-GB", "Europe/London")`'],
  ['format_number', 'pressroom', '`1234.5|format_number("de-DE", 2)` → `1.234,50`', 'number'],
  ['format_percent', 'pressroom', '`0.19|format_percent("de-DE")` → `19 %`', 'number'],
  ['markdown', 'pressroom', 'Markdown to HTML; HTML inside it is printed as text'],
  ['nl2br', 'nunjucks'],
  ['qrcode', 'pressroom', '`url|qrcode(width="30mm")`: an inline SVG QR code'],
];

const JINJA2_TESTS: Row[] = [
  ['boolean', 'pressroom'],
  ['callable', 'nunjucks'],
  ['defined', 'nunjucks'],
  ['divisibleby', 'nunjucks'],
  ['eq', 'nunjucks'],
  ['equalto', 'nunjucks'],
  ['escaped', 'nunjucks'],
  ['even', 'nunjucks'],
  ['false', 'pressroom'],
  ['filter', 'pressroom'],
  ['float', 'pressroom', 'a number that is not a whole number (JSON has one number type)'],
  ['ge', 'nunjucks'],
  ['greaterthan', 'nunjucks'],
  ['gt', 'nunjucks'],
  ['in', 'no', "nunjucks' parser reads `in` after `is` as the operator; write `x in [1, 2]`, which works"],
  ['integer', 'pressroom', 'a whole number'],
  ['iterable', 'nunjucks'],
  ['le', 'nunjucks'],
  ['lessthan', 'nunjucks'],
  ['lower', 'nunjucks'],
  ['lt', 'nunjucks'],
  ['mapping', 'nunjucks'],
  ['ne', 'nunjucks'],
  ['none', 'pressroom'],
  ['number', 'nunjucks'],
  ['odd', 'nunjucks'],
  ['sameas', 'nunjucks'],
  ['sequence', 'pressroom'],
  ['string', 'nunjucks'],
  ['test', 'pressroom'],
  ['true', 'pressroom'],
  ['undefined', 'nunjucks'],
  ['upper', 'nunjucks'],
];

const OTHER_TESTS: Row[] = [
  ['falsy', 'nunjucks'],
  ['null', 'nunjucks'],
  ['truthy', 'nunjucks'],
];

const JINJA2_GLOBALS: Row[] = [
  ['cycler', 'nunjucks'],
  ['dict', 'pressroom', '`dict(a=1)`'],
  ['joiner', 'nunjucks'],
  ['lipsum', 'no', 'placeholder text does not belong in a generated document'],
  ['namespace', 'pressroom', '`{% set ns = namespace(total=0) %}` … `{% set ns.total = ns.total + x %}` inside a loop'],
  ['range', 'nunjucks'],
];

const OTHER_GLOBALS: Row[] = [
  [
    'asset',
    'pressroom',
    '`asset("logo.png")`: the URL of the account\'s asset of that name (docs/assets.md#assets-in-templates)',
  ],
  [
    'sepa_qrcode',
    'pressroom',
    '`sepa_qrcode(iban=…, name=…, amount=…, reference=…)`: the EPC payment QR code (GiroCode) banking apps read',
  ],
];

function entries(kind: LanguageEntry['kind'], jinja2: boolean, rows: Row[]): LanguageEntry[] {
  return rows.map(([name, support, note, fieldHint]) => ({
    name,
    kind,
    jinja2,
    support,
    ...(note ? { note } : {}),
    ...(fieldHint ? { fieldHint } : {}),
  }));
}

/** Every entry, Jinja2's first, each kind in alphabetical order. */
export const LANGUAGE: readonly LanguageEntry[] = [
  ...entries('filter', true, JINJA2_FILTERS),
  ...entries('filter', false, OTHER_FILTERS),
  ...entries('test', true, JINJA2_TESTS),
  ...entries('test', false, OTHER_TESTS),
  ...entries('global', true, JINJA2_GLOBALS),
  ...entries('global', false, OTHER_GLOBALS),
];

const supported = (kind: LanguageEntry['kind']) =>
  new Set(LANGUAGE.filter((e) => e.kind === kind && e.support !== 'no').map((e) => e.name));

/** Filter names a template may use. */
export const SUPPORTED_FILTERS: ReadonlySet<string> = supported('filter');
/** Test names a template may use (`x is name`). */
export const SUPPORTED_TESTS: ReadonlySet<string> = supported('test');
/** Global names a template may use; they are never data fields. */
export const SUPPORTED_GLOBALS: ReadonlySet<string> = supported('global');

/** The field hint of filter `name`, if it has one. */
export function filterFieldHint(name: string): FieldHint | undefined {
  return LANGUAGE.find((e) => e.kind === 'filter' && e.name === name)?.fieldHint;
}

/** The docs table (docs/templates.md, between its markers), generated from this list. */
export function languageTable(): string {
  const label: Record<Support, string> = { nunjucks: 'yes', pressroom: 'yes (Pressroom)', no: 'no' };
  const lines = ['| name | kind | Jinja2 built-in | supported | notes |', '|---|---|---|---|---|'];
  for (const e of LANGUAGE)
    lines.push(
      `| \`${e.name}\` | ${e.kind} | ${e.jinja2 ? 'yes' : 'no'} | ${label[e.support]} | ${(e.note ?? '').replace(/\|/g, '\\|')} |`,
    );
  return lines.join('\n');
}
