import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LANGUAGE, languageTable, SUPPORTED_FILTERS } from './catalogue.js';

const JINJA2_FILTERS =
  'abs attr batch capitalize center count d default dictsort e escape filesizeformat first float forceescape format groupby indent int items join last length list lower map max min pprint random reject rejectattr replace reverse round safe select selectattr slice sort string striptags sum title tojson trim truncate unique upper urlencode urlize wordcount wordwrap xmlattr';
const JINJA2_TESTS =
  'boolean callable defined divisibleby eq equalto escaped even false filter float ge greaterthan gt in integer iterable le lessthan lower lt mapping ne none number odd sameas sequence string test true undefined upper';
const JINJA2_GLOBALS = 'cycler dict joiner lipsum namespace range';

describe('the language catalogue', () => {
  it('lists every Jinja2 built-in filter, test and global (Jinja2 3.1) exactly once', () => {
    const names = (kind: string) =>
      LANGUAGE.filter((e) => e.kind === kind && e.jinja2)
        .map((e) => e.name)
        .join(' ');
    expect(names('filter')).toBe(JINJA2_FILTERS);
    expect(names('test')).toBe(JINJA2_TESTS);
    expect(names('global')).toBe(JINJA2_GLOBALS);
    const keys = LANGUAGE.map((e) => `${e.kind}:${e.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('says why for every Jinja2 built-in it does not offer', () => {
    for (const e of LANGUAGE.filter((x) => x.support === 'no')) expect(e.note, e.name).toBeTruthy();
  });

  it('is the table published in docs/templates.md', () => {
    const doc = readFileSync(new URL('../../docs/templates.md', import.meta.url), 'utf8');
    const table = /<!-- language-table:start -->\n([\s\S]*?)\n<!-- language-table:end -->/.exec(doc)?.[1];
    expect(table, 'run: node --import tsx scripts/update-language-table.ts').toBe(languageTable());
    expect(SUPPORTED_FILTERS.has('format')).toBe(true);
  });
});
