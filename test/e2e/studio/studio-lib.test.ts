/**
 * The studio's pure logic, without a browser: the generated form's data model, where server errors
 * land in the editor, the copy-paste snippets, and the line diff that compares template versions.
 */
import { describe, expect, it } from 'vitest';
import { checkNumberInput, emptyRow, missingRequired, parseDataJson, parseItemInput, parseNumberInput, readField, writeField } from '../../../studio/src/lib/form-data.js';
import { describeProblem, isStale, onlyChangedPane, problemsFromBody, withSources } from '../../../studio/src/lib/problems.js';
import { parseWarningHeaders } from '../../../studio/src/lib/warnings.js';
import { assetNameFor, assetPath, assetSnippet, assetUsageExample } from '../../../studio/src/lib/assets.js';
import { buildSnippets, pythonLiteral, shellQuote } from '../../../studio/src/lib/snippets.js';
import { formatBalanceChange, isVersionTag, jobVersionText, readRateLimit } from '../../../studio/src/lib/format.js';
import { diffLines, withContext } from '../../../studio/src/lib/line-diff.js';
import { diffTemplates } from '../../../studio/src/lib/template-diff.js';

describe('form data', () => {
  it('reads nested paths first, then literal dotted keys', () => {
    expect(readField({ customer: { name: 'Ada' } }, 'customer.name')).toBe('Ada');
    expect(readField({ 'customer.name': 'Flat' }, 'customer.name')).toBe('Flat');
    expect(readField({ customer: { name: 'Nested' }, 'customer.name': 'Flat' }, 'customer.name')).toBe('Nested');
    expect(readField({ customer: 'not an object' }, 'customer.name')).toBeUndefined();
  });

  it('writes nested objects without mutating, drops the flat spelling, and removes on undefined', () => {
    const data = { 'customer.name': 'Flat', customer: { id: 7 }, other: 1 };
    const next = writeField(data, 'customer.name', 'Ada');
    expect(next).toEqual({ customer: { id: 7, name: 'Ada' }, other: 1 });
    expect(data).toEqual({ 'customer.name': 'Flat', customer: { id: 7 }, other: 1 });
    expect(writeField(next, 'customer.name', undefined)).toEqual({ customer: { id: 7 }, other: 1 });
    expect(writeField({}, 'a.b.c', true)).toEqual({ a: { b: { c: true } } });
  });

  it('converts inputs to the field types', () => {
    expect(parseNumberInput(' 12.5 ', false)).toBe(12.5);
    expect(parseNumberInput('12.9', true)).toBeUndefined();
    expect(parseNumberInput('', false)).toBeUndefined();
    expect(parseNumberInput('abc', false)).toBeUndefined();
    expect(parseItemInput({ name: 'tags', label: 'Tags', type: 'array' }, 'a, b,,c ')).toEqual(['a', 'b', 'c']);
    expect(parseItemInput({ name: 'qty', label: 'Qty', type: 'number' }, '3')).toBe(3);
    expect(emptyRow({ key: 'items', label: 'Items', type: 'array', spec: [{ name: 'd', label: 'D' }, { name: 'n', label: 'N', type: 'number' }] })).toEqual({ d: '', n: 0 });
    expect(emptyRow({ key: 'tags', label: 'Tags', type: 'array' })).toBe('');
  });

  it('lists required fields without a value, and parses the JSON pane', () => {
    const fields = [
      { key: 'a', label: 'A', required: true },
      { key: 'b.c', label: 'C', required: true },
      { key: 'items', label: 'Items', type: 'array' as const, required: true },
      { key: 'flag', label: 'Flag', type: 'boolean' as const, required: true },
    ];
    expect(missingRequired(fields, { a: 'x', b: { c: '' }, items: [] }).map((f) => f.key)).toEqual(['b.c', 'items']);
    expect(parseDataJson('{"a": 1}')).toEqual({ data: { a: 1 } });
    expect(parseDataJson('')).toEqual({ data: {} });
    expect(parseDataJson('[1]')).toHaveProperty('error');
    expect(parseDataJson('{nope')).toHaveProperty('error');
  });
});

describe('problems from server errors', () => {
  it('places save-time syntax errors in the pane named by loc, at ctx.line', () => {
    const problems = problemsFromBody({
      detail: [
        { loc: ['body', 'html'], type: 'template_syntax', msg: 'Template syntax error: unexpected token (line 3, column 10)', ctx: { line: 3, column: 10 } },
        { loc: ['body', 'page', 'footer_html'], type: 'template_syntax', msg: 'Template syntax error: x (line 2)', ctx: { line: 2 } },
        { loc: ['body', 'page', 'margin', 'top'], type: 'string_pattern_mismatch', msg: 'String should match pattern' },
      ],
    });
    expect(problems).toEqual([
      { pane: 'html', line: 3, column: 10, message: 'Template syntax error: unexpected token (line 3, column 10)' },
      { pane: 'footer_html', line: 2, column: undefined, message: 'Template syntax error: x (line 2)' },
      { pane: 'page', message: 'margin.top: String should match pattern' },
    ]);
    expect(describeProblem(problems[0]!)).toBe('HTML, line 3: Template syntax error: unexpected token (line 3, column 10)');
  });

  it('places coded template errors on the pane their part names, never by reading the message', () => {
    expect(problemsFromBody({ error: 'TEMPLATE_SYNTAX_ERROR', message: 'unexpected end', part: 'html', line: 4, column: 2 })).toEqual([{ pane: 'html', line: 4, column: 2, message: 'unexpected end' }]);
    expect(problemsFromBody({ error: 'TEMPLATE_RENDER_ERROR', message: 'x is undefined', part: 'footer', line: 1 })[0]).toMatchObject({ pane: 'footer_html', line: 1 });
    expect(problemsFromBody({ error: 'TEMPLATE_SYNTAX_ERROR', message: 'bad', part: 'header', line: 2 })[0]!.pane).toBe('header_html');
    expect(problemsFromBody({ error: 'TEMPLATE_SYNTAX_ERROR', message: 'bad', part: 'css', line: 2 })[0]!.pane).toBe('css');
    // No part (a server before issue 13): the caller's guess, else the HTML — whatever the message says.
    expect(problemsFromBody({ error: 'TEMPLATE_RENDER_ERROR', message: 'page.footer_html: In the footer: x', line: 1 })[0]!.pane).toBe('html');
    expect(problemsFromBody({ error: 'TEMPLATE_RENDER_ERROR', message: 'x', line: 1 }, 'footer_html')[0]!.pane).toBe('footer_html');
    expect(problemsFromBody({ error: 'TEMPLATE_TIMEOUT', message: 'Rendering took too long' })).toEqual([{ pane: 'html', message: 'Rendering took too long' }]);
    expect(problemsFromBody('text')).toEqual([]);
  });

  it('guesses the pane of a part-less error only when exactly one pane changed since the last good preview', () => {
    const good = { html: '<p>a</p>', css: '', header_html: '', footer_html: 'f' };
    expect(onlyChangedPane(good, { ...good, footer_html: 'f {{ x | }}' })).toBe('footer_html');
    expect(onlyChangedPane(good, { ...good, html: 'x', footer_html: 'y' })).toBeUndefined();
    expect(onlyChangedPane(good, good)).toBeUndefined();
    expect(onlyChangedPane(null, good)).toBeUndefined();
  });

  it('knows a problem is stale once its pane changed', () => {
    const [problem] = withSources([{ pane: 'page', message: 'width' }], { page: '{"width":"1"}' });
    expect(isStale(problem!, { page: '{"width":"1"}' })).toBe(false);
    expect(isStale(problem!, { page: '{"width":"10mm"}' })).toBe(true);
  });
});

describe('number inputs', () => {
  it('takes what JSON numbers are and refuses the rest, with a fix when a locale spelling has one reading', () => {
    expect(checkNumberInput('1234.56', false)).toEqual({ ok: true, value: 1234.56 });
    expect(checkNumberInput('-3e2', false)).toEqual({ ok: true, value: -300 });
    expect(checkNumberInput(' ', false)).toEqual({ ok: true, value: undefined });
    expect(checkNumberInput('42', true)).toEqual({ ok: true, value: 42 });
    expect(checkNumberInput('1.234,56', false)).toMatchObject({ ok: false, suggestion: '1234.56' });
    expect(checkNumberInput('12,5', false)).toMatchObject({ ok: false, suggestion: '12.5' });
    expect(checkNumberInput('1,234,567.5', false)).toMatchObject({ ok: false, suggestion: '1234567.5' });
    // Ambiguous (one thousand two hundred thirty-four, or one point two three four): refused, no guess.
    expect(checkNumberInput('1,234', false)).toEqual({ ok: false, message: expect.stringContaining('Not a number') });
    expect(checkNumberInput('12 €', false)).toMatchObject({ ok: false });
    expect(checkNumberInput('0x10', false)).toMatchObject({ ok: false });
    expect(checkNumberInput('Infinity', false)).toMatchObject({ ok: false });
    expect(checkNumberInput('12.9', true)).toEqual({ ok: false, message: expect.stringContaining('whole number') });
    expect(checkNumberInput('1.234', true)).toMatchObject({ ok: false, suggestion: '1234' });
  });
});

describe('warnings and assets', () => {
  it('reads the warning headers of a binary answer, and none from a server without them', () => {
    const headers = (h: Record<string, string>) => (name: string) => h[name] ?? null;
    const details = JSON.stringify([{ code: 'RESOURCE_BLOCKED', message: 'Blocked \u00e9', url: 'https://x.test/a.png' }, { nope: 1 }]);
    expect(parseWarningHeaders(headers({ 'x-pressroom-warnings': '3', 'x-pressroom-warning-details': details }))).toEqual({
      warnings: [{ code: 'RESOURCE_BLOCKED', message: 'Blocked \u00e9', url: 'https://x.test/a.png' }],
      count: 3,
    });
    expect(parseWarningHeaders(headers({ 'x-pressroom-warning-details': 'not json' }))).toEqual({ warnings: [], count: 0 });
    expect(parseWarningHeaders(headers({}))).toEqual({ warnings: [], count: 0 });
  });

  it('addresses assets with slashes in their names, and names uploads as the API allows', () => {
    expect(assetPath('brand/logo v2.png')).toBe('/v1/assets/brand/logo%20v2.png');
    expect(assetSnippet('brand/logo.png')).toBe("{{ asset('brand/logo.png') }}");
    expect(assetNameFor('My Logo (final).png')).toBe('My-Logo-final-.png');
    expect(assetUsageExample({ name: 'fonts/Brand.woff2', content_type: 'font/woff2' })).toBe(`@font-face { font-family: "Brand"; src: url("{{ asset('fonts/Brand.woff2') }}"); }`);
  });
});

describe('snippets', () => {
  const input = { baseUrl: 'https://pdf.example.com/', templateId: 'abcdefghijkl', data: { name: "O'Brien", paid: true, n: null, items: [{ q: 1 }] } };

  it('quotes data safely for the shell and never includes a key', () => {
    const { curl } = buildSnippets({ ...input, mode: 'url' });
    expect(curl).toContain("curl -sS -X POST 'https://pdf.example.com/v1/pdf/create'");
    expect(curl).toContain('"name": "O\'\\\'\'Brien"');
    expect(curl).toContain('$PRESSROOM_API_KEY');
    expect(shellQuote("a'b")).toBe("'a'\\''b'");
  });

  it('writes Python literals and picks the endpoint per mode', () => {
    expect(pythonLiteral({ a: true, b: null, c: [1, 'x'] })).toBe('{\n    "a": True,\n    "b": None,\n    "c": [\n        1,\n        "x",\n    ],\n}');
    const asyncSnippets = buildSnippets({ ...input, mode: 'async' });
    expect(asyncSnippets.python).toContain('/v1/pdf/create-async');
    expect(asyncSnippets.javascript).toContain('create-async');
    const binary = buildSnippets({ ...input, mode: 'binary', filename: 'out' });
    expect(binary.curl).toContain("-o 'out.pdf'");
    expect(binary.javascript).toContain('"export_type": "binary"');
    expect(binary.python).toContain('f.write(response.content)');
  });

  it('names a version by its tag, and leaves version out for the draft', () => {
    expect(buildSnippets({ ...input, mode: 'url', version: 'prod' }).curl).toContain('"version": "prod"');
    expect(buildSnippets({ ...input, mode: 'url' }).curl).not.toContain('version');
  });
});

describe('comparing versions', () => {
  const ops = (before: string, after: string) => diffLines(before, after).map((l) => `${l.op === 'same' ? ' ' : l.op === 'added' ? '+' : '-'}${l.text}`);

  it('marks the changed lines and keeps the rest in order, with line numbers on both sides', () => {
    expect(ops('a\nb\nc', 'a\nB\nc')).toEqual([' a', '-b', '+B', ' c']);
    expect(ops('a\nb\nc\nd', 'a\nc\nd\ne')).toEqual([' a', '-b', ' c', ' d', '+e']);
    expect(ops('x\ny', 'y\nx')).toEqual(['-x', ' y', '+x']);
    expect(ops('', 'one')).toEqual(['+one']);
    expect(ops('one', '')).toEqual(['-one']);
    expect(ops('same', 'same')).toEqual([' same']);
    expect(diffLines('a\nb\nc', 'a\nX\nc')).toEqual([
      { op: 'same', text: 'a', oldNumber: 1, newNumber: 1 },
      { op: 'removed', text: 'b', oldNumber: 2 },
      { op: 'added', text: 'X', newNumber: 2 },
      { op: 'same', text: 'c', oldNumber: 3, newNumber: 3 },
    ]);
  });

  it('finds a one-line change in a long text, and stays bounded when everything changed', () => {
    const long = Array.from({ length: 5000 }, (_, i) => `line ${i}`);
    const edited = long.map((l, i) => (i === 2500 ? 'changed' : l));
    const changes = diffLines(long.join('\n'), edited.join('\n')).filter((l) => l.op !== 'same');
    expect(changes).toEqual([
      { op: 'removed', text: 'line 2500', oldNumber: 2501 },
      { op: 'added', text: 'changed', newNumber: 2501 },
    ]);
    // 3,000 × 3,000 different lines is past the table's cap: shown as all removed, then all added.
    const other = Array.from({ length: 3000 }, (_, i) => `other ${i}`);
    const rewrite = diffLines(long.slice(0, 3000).join('\n'), other.join('\n'));
    expect(rewrite.filter((l) => l.op === 'removed')).toHaveLength(3000);
    expect(rewrite.filter((l) => l.op === 'added')).toHaveLength(3000);
    expect(rewrite[0]!.op).toBe('removed');
  });

  it('folds long unchanged runs, keeping three lines of context', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
    const folded = withContext(diffLines(before, before.replace('l10', 'ten')));
    expect(folded.map((l) => (l.op === 'skip' ? `skip ${l.count}` : l.op))).toEqual(['skip 7', 'same', 'same', 'same', 'removed', 'added', 'same', 'same', 'same', 'skip 6']);
  });

  it('diffs each part of a template, lists only the parts that changed, and treats unset page defaults as the defaults', () => {
    const v1 = { html: '<p>One</p>', css: null, page: null, sample_data: { a: 1 } };
    const v2 = { html: '<p>Two</p>', css: '', page: { format: 'A4' as const, footer_html: '<i>f</i>' }, sample_data: { a: 1 } };
    const parts = diffTemplates(v1, v2);
    expect(parts.map((p) => [p.part, p.added, p.removed])).toEqual([
      ['html', 1, 1],
      ['footer_html', 1, 0],
    ]);
    expect(diffTemplates(v1, { ...v1 })).toEqual([]);
    expect(diffTemplates(v1, { ...v1, page: { orientation: 'landscape', margin: { top: '1cm' } } }).map((p) => p.lines.filter((l) => l.op === 'added').map((l) => l.text))).toEqual([['orientation: landscape', 'margin top: 1cm']]);
  });

  it('checks tags with the API\'s rule and names what a job rendered', () => {
    for (const tag of ['prod', 'v1', 'a-b_c', '12']) expect(isVersionTag(tag), tag).toBe(true);
    for (const tag of ['Prod', 'a', '-prod', 'prod-', 'with space', 'x'.repeat(51)]) expect(isVersionTag(tag), tag).toBe(false);
    expect(jobVersionText({ number: 2, tag: 'prod' })).toBe('version 2 (prod)');
    expect(jobVersionText(null)).toBe('the draft');
  });
});

describe('formatting', () => {
  it('reads the rate-limit headers and signs ledger changes for people', () => {
    const headers: Record<string, string> = { 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '1700000000' };
    expect(readRateLimit((n) => headers[n] ?? null)).toEqual({ limit: 120, remaining: 7, resetAt: 1700000000 });
    expect(readRateLimit(() => null)).toBeNull();
    expect(formatBalanceChange(1)).toBe('−1');
    expect(formatBalanceChange(-100)).toBe('+100');
  });
});
