/**
 * The studio's pure logic, without a browser: the generated form's data model, where server errors
 * land in the editor, the copy-paste snippets, the line diff that compares template versions, and the
 * e-invoice request and findings.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  EXAMPLE_INVOICE,
  describeDelivered,
  einvoiceFindings,
  einvoiceRequest,
  formatPath,
  initialEInvoiceDraft,
  isFilledByEInvoice,
  jsonValueLines,
  lineOfField,
  looksLikeInvoice,
  resolveEInvoice,
} from '../../../studio/src/lib/einvoice/einvoice.js';
import { EINVOICE_STARTER_DATA } from '../../../studio/src/lib/einvoice/starter-einvoice.js';
import {
  countFindings,
  describeChecks,
  fatalRules,
  groupByRule,
  isEInvoiceFile,
  splitRuleWarnings,
} from '../../../studio/src/lib/einvoice/einvoice-report.js';
import { SAMPLE_INVOICE } from '../../support/documents/einvoice-samples.js';
import {
  checkNumberInput,
  emptyRow,
  missingRequired,
  missingRequiredWarnings,
  parseDataJson,
  parseItemInput,
  parseNumberInput,
  readField,
  writeField,
} from '../../../studio/src/lib/form-data.js';
import { describeLoc, formPlace, isEditedSince, refusalsOf, valueAt } from '../../../studio/src/lib/field-marks.js';
import { readableFields, readableLabel } from '../../../studio/src/lib/field-labels.js';
import { describeIssue, describeWarning, inStudioWords } from '../../../studio/src/lib/messages.js';
import { fileNameFrom } from '../../../studio/src/lib/format.js';
import {
  describeProblem,
  isStale,
  knownNames,
  isPdfUaFinding,
  onlyChangedPane,
  problemsFromBody,
  problemsFromValidation,
  withSources,
} from '../../../studio/src/lib/problems.js';
import { parseWarningHeaders } from '../../../studio/src/lib/warnings.js';
import {
  assetNameFor,
  assetPath,
  assetTypeWords,
  assetSnippet,
  assetUsageExample,
  assetUseText,
  replaceQuestion,
} from '../../../studio/src/lib/assets.js';
import { buildSnippets, pythonLiteral, shellQuote } from '../../../studio/src/lib/snippets.js';
import { formatBalanceChange, isVersionTag, jobVersionText, readRateLimit } from '../../../studio/src/lib/format.js';
import { diffLines, withContext } from '../../../studio/src/lib/line-diff.js';
import { diffTemplates } from '../../../studio/src/lib/template-diff.js';
import {
  EMPTY_FINISHING,
  finishingRequest,
  forSnippet,
  validityOf,
} from '../../../studio/src/screens/finishing/finishing.js';

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
    expect(
      emptyRow({
        key: 'items',
        label: 'Items',
        type: 'array',
        spec: [
          { name: 'd', label: 'D' },
          { name: 'n', label: 'N', type: 'number' },
        ],
      }),
    ).toEqual({ d: '', n: 0 });
    expect(emptyRow({ key: 'tags', label: 'Tags', type: 'array' })).toBe('');
  });

  it('lists required fields without a value by the service\'s rule (missing, null or ""), and parses the JSON pane', () => {
    const fields = [
      { key: 'a', label: 'A', required: true },
      { key: 'b.c', label: 'C', required: true },
      { key: 'items', label: 'Items', type: 'array' as const, required: true },
      { key: 'flag', label: 'Flag', type: 'boolean' as const, required: true },
      { key: 'note', label: 'Note' },
    ];
    // An empty list and `false` are values; a flag the data lacks is missing, as the API says.
    expect(missingRequired(fields, { a: 'x', b: { c: '' }, items: [] }).map((f) => f.key)).toEqual(['b.c', 'flag']);
    expect(missingRequired(fields, { a: null, 'b.c': 'flat', items: [1], flag: false }).map((f) => f.key)).toEqual([
      'a',
    ]);
    // `einvoice` is the service's to fill when Run attaches one.
    expect(missingRequired([{ key: 'einvoice.totals', label: 'Totals', required: true }], {}, ['einvoice'])).toEqual(
      [],
    );
    expect(missingRequiredWarnings([{ key: 'a', label: 'A', required: true }], {})).toEqual([
      { code: 'MISSING_REQUIRED_FIELD', message: expect.stringContaining('"a" is a required field') },
    ]);
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
        {
          loc: ['body', 'html'],
          type: 'template_syntax',
          msg: 'Template syntax error: unexpected token (line 3, column 10)',
          ctx: { line: 3, column: 10 },
        },
        {
          loc: ['body', 'page', 'footer_html'],
          type: 'template_syntax',
          msg: 'Template syntax error: x (line 2)',
          ctx: { line: 2 },
        },
        { loc: ['body', 'page', 'margin', 'top'], type: 'string_pattern_mismatch', msg: 'String should match pattern' },
      ],
    });
    expect(problems).toEqual([
      { pane: 'html', line: 3, column: 10, message: 'Template syntax error: unexpected token (line 3, column 10)' },
      { pane: 'footer_html', line: 2, column: undefined, message: 'Template syntax error: x (line 2)' },
      { pane: 'page', message: 'margin.top: String should match pattern' },
    ]);
    expect(describeProblem(problems[0]!)).toBe(
      'HTML, line 3: Template syntax error: unexpected token (line 3, column 10)',
    );
  });

  it('places coded template errors on the pane their part names, never by reading the message', () => {
    expect(
      problemsFromBody({ error: 'TEMPLATE_SYNTAX_ERROR', message: 'unexpected end', part: 'html', line: 4, column: 2 }),
    ).toEqual([{ pane: 'html', line: 4, column: 2, message: 'unexpected end' }]);
    expect(
      problemsFromBody({ error: 'TEMPLATE_RENDER_ERROR', message: 'x is undefined', part: 'footer', line: 1 })[0],
    ).toMatchObject({ pane: 'footer_html', line: 1 });
    expect(problemsFromBody({ error: 'TEMPLATE_SYNTAX_ERROR', message: 'bad', part: 'header', line: 2 })[0]!.pane).toBe(
      'header_html',
    );
    expect(problemsFromBody({ error: 'TEMPLATE_SYNTAX_ERROR', message: 'bad', part: 'css', line: 2 })[0]!.pane).toBe(
      'css',
    );
    // No part (a server before issue 13): the caller's guess, else the HTML — whatever the message says.
    expect(
      problemsFromBody({ error: 'TEMPLATE_RENDER_ERROR', message: 'page.footer_html: In the footer: x', line: 1 })[0]!
        .pane,
    ).toBe('html');
    expect(problemsFromBody({ error: 'TEMPLATE_RENDER_ERROR', message: 'x', line: 1 }, 'footer_html')[0]!.pane).toBe(
      'footer_html',
    );
    expect(problemsFromBody({ error: 'TEMPLATE_TIMEOUT', message: 'Rendering took too long' })).toEqual([
      { pane: 'html', message: 'Rendering took too long' },
    ]);
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

  describe("PDF/UA findings, at the template's element their ctx names", () => {
    const issue = (checkpoint: string, msg: string, ctx?: Record<string, unknown>) => ({
      loc: ['body', 'pdf_ua'],
      msg,
      type: `value_error.pdf_ua.${checkpoint}`,
      ...(ctx ? { ctx } : {}),
    });
    const NO_ALT = (src: string) =>
      `The image <img src="${src}"> has no alternative text: give it alt="…" saying what it shows, or alt="" if it is only decoration. PDF/UA needs it (Matterhorn checkpoint 13-004).`;
    const html = [
      '<!doctype html>',
      '<html>',
      '<head><meta charset="utf-8"></head>',
      '<body>',
      '  <!-- <img src="logo.png"> -->',
      '  <img class="photo" alt="Our office" src="office.jpg">',
      '  <p>{{ intro }}</p>',
      '  <img',
      '    src="logo.png?v=1&amp;size=2"',
      '    width="80">',
      '  <img src="{{ signature_url }}">',
      '  <h1>Invoice</h1>',
      '  <h3>Terms</h3>',
      '</body>',
      '</html>',
    ].join('\n');

    it("puts an image at the <img> whose src is the one named, in the studio's words", () => {
      const [problem] = problemsFromValidation(
        [issue('13-004', NO_ALT('logo.png?v=1&size=2'), { element: 'img', src: 'logo.png?v=1&size=2' })],
        { html },
      );
      // The tag opens on line 8 (the commented-out one on line 5 is not it); its src is decoded.
      expect(problem).toEqual({
        pane: 'html',
        line: 8,
        column: 3,
        message:
          'This image has no alternative text: give it alt="…" saying what it shows, or alt="" if it is only decoration. PDF/UA needs it (Matterhorn checkpoint 13-004).',
      });
      expect(describeProblem(problem!)).toMatch(/^HTML, line 8: This image has no alternative text: /);
      // A src cut by the server (a long data: URL) matches by its beginning.
      const cut = problemsFromValidation(
        [issue('13-004', NO_ALT('logo.png?v=1…'), { element: 'img', src: 'logo.png?v=1', src_truncated: true })],
        { html },
      );
      expect(cut[0]).toMatchObject({ pane: 'html', line: 8 });
    });

    it('puts an image whose src is not written as such at the first <img> without alt not given to another finding', () => {
      // The rendered src of line 11's {{ signature_url }}: not in the text, so the first image without alt takes it.
      const problems = problemsFromValidation(
        [
          issue('13-004', NO_ALT('https://cdn.example/sig.png'), {
            element: 'img',
            src: 'https://cdn.example/sig.png',
          }),
          issue('13-004', NO_ALT('https://cdn.example/other.png'), {
            element: 'img',
            src: 'https://cdn.example/other.png',
          }),
          issue('13-004', '3 more images have no alternative text. PDF/UA needs it (Matterhorn checkpoint 13-004).', {
            element: 'img',
            more: 3,
          }),
        ],
        { html },
      );
      expect(problems).toEqual([
        // Not "This image": the line is a guess, the server's message names the image as printed.
        { pane: 'html', line: 8, column: 3, message: NO_ALT('https://cdn.example/sig.png') },
        { pane: 'html', line: 11, column: 3, message: NO_ALT('https://cdn.example/other.png') },
        {
          pane: 'html',
          message: '3 more images have no alternative text. PDF/UA needs it (Matterhorn checkpoint 13-004).',
        },
      ]);
      // An image only in the footer goes on the footer.
      const [footer] = problemsFromValidation(
        [issue('13-004', NO_ALT('seal.png'), { element: 'img', src: 'seal.png' })],
        {
          html: '<p>no images</p>',
          footer_html: '<div>\n<img src="seal.png"></div>',
        },
      );
      expect(footer).toMatchObject({ pane: 'footer_html', line: 2, column: 1 });
    });

    it('puts the language at <html>, the title at <title> or <head> (else line 1), a heading at its first tag', () => {
      const lang = issue(
        '11-001',
        'The document declares no language: give its <html> element a lang attribute, e.g. <html lang="en">. PDF/UA needs it (Matterhorn checkpoint 11-001).',
        { element: 'html' },
      );
      const title = issue(
        '06-003',
        'The document has no title: add a <title> to its <head> (viewers show it instead of the file name). PDF/UA needs it (Matterhorn checkpoint 06-003).',
        { element: 'title' },
      );
      const heading = issue(
        '14-003',
        'Heading H3 on page 1 follows H1: level 2 is skipped. PDF/UA forbids it (Matterhorn checkpoint 14-003).',
        { element: 'h3' },
      );
      expect(problemsFromValidation([lang, title, heading], { html })).toEqual([
        { pane: 'html', line: 2, column: 1, message: lang.msg },
        { pane: 'html', line: 3, column: 1, message: title.msg },
        { pane: 'html', line: 13, column: 3, message: heading.msg },
      ]);
      expect(
        problemsFromValidation([title], { html: '<html lang="en">\n<head>\n  <title>{{ name }}</title>\n</head>' })[0],
      ).toMatchObject({ line: 3, column: 3 });
      // A fragment: no <html> to point at; the title at line 1.
      expect(problemsFromValidation([lang, title], { html: '<p>Hello</p>' })).toEqual([
        { pane: 'html', message: lang.msg },
        { pane: 'html', line: 1, message: title.msg },
      ]);
    });

    it('goes on the HTML without a line when the text is not known or has no such element; other refusals stay where they were', () => {
      const finding = issue('13-004', NO_ALT('x.png'), { element: 'img', src: 'x.png' });
      expect(problemsFromBody({ detail: [finding] })).toEqual([{ pane: 'html', message: NO_ALT('x.png') }]);
      expect(problemsFromBody({ detail: [finding] }, 'html', { html: '<p>none</p>' })).toEqual([
        { pane: 'html', message: NO_ALT('x.png') },
      ]);
      // A finding without ctx (an older server): the HTML, as said.
      expect(problemsFromValidation([issue('31-009', 'The font X is not embedded.')], { html })).toEqual([
        { pane: 'html', message: 'The font X is not embedded.' },
      ]);
      // A refused combination of options is not a finding about the template.
      const combination = { loc: ['body', 'pdf_ua'], msg: 'leave pdf_ua out', type: 'value_error.pdf_ua' };
      expect(isPdfUaFinding(combination)).toBe(false);
      expect(isPdfUaFinding(finding)).toBe(true);
      expect(problemsFromValidation([combination], { html })).toEqual([{ pane: 'other', message: 'leave pdf_ua out' }]);
    });

    it('is stale once the pane it was found in changes', () => {
      const [problem] = withSources(
        problemsFromValidation([issue('11-001', 'no lang', { element: 'html' })], { html }),
        {
          html,
        },
      );
      expect(isStale(problem!, { html })).toBe(false);
      expect(isStale(problem!, { html: html.replace('<html>', '<html lang="en">') })).toBe(true);
    });
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
    const details = JSON.stringify([
      { code: 'RESOURCE_BLOCKED', message: 'Blocked \u00e9', url: 'https://x.test/a.png' },
      { nope: 1 },
    ]);
    expect(
      parseWarningHeaders(headers({ 'x-pressroom-warnings': '3', 'x-pressroom-warning-details': details })),
    ).toEqual({
      warnings: [{ code: 'RESOURCE_BLOCKED', message: 'Blocked \u00e9', url: 'https://x.test/a.png' }],
      count: 3,
    });
    expect(parseWarningHeaders(headers({ 'x-pressroom-warning-details': 'not json' }))).toEqual({
      warnings: [],
      count: 0,
    });
    expect(parseWarningHeaders(headers({}))).toEqual({ warnings: [], count: 0 });
  });

  it("names an asset's kind of file in words, not its media type (issue 50 point 11)", () => {
    expect(
      [
        'image/png',
        'image/svg+xml',
        'font/woff2',
        'application/font-woff',
        'font/ttf',
        'text/css',
        'application/octet-stream',
      ].map(assetTypeWords),
    ).toEqual(['PNG image', 'SVG image', 'WOFF2 font', 'WOFF font', 'TrueType font', 'Stylesheet', 'File']);
  });

  it('addresses assets with slashes in their names, and names uploads as the API allows', () => {
    expect(assetPath('brand/logo v2.png')).toBe('/v1/assets/brand/logo%20v2.png');
    expect(assetSnippet('brand/logo.png')).toBe("{{ asset('brand/logo.png') }}");
    expect(assetNameFor('My Logo (final).png')).toBe('My-Logo-final-.png');
    expect(assetUsageExample({ name: 'fonts/Brand.woff2', content_type: 'font/woff2' })).toBe(
      `@font-face { font-family: "Brand"; src: url("{{ asset('fonts/Brand.woff2') }}"); }`,
    );
  });

  it('says where an asset is used and what replacing it changes (issue 50)', () => {
    const user = (name: string, extra: Record<string, unknown> = {}) => ({
      template_id: name.toLowerCase(),
      template_name: name,
      draft: true,
      versions: [],
      computed: false,
      ...extra,
    });
    expect(
      assetUseText(
        user('Branded', {
          versions: [
            { version_number: 1, tag: 'v1', revision: 1 },
            { version_number: 3, tag: 'v3', revision: 2 },
          ],
        }),
      ),
    ).toBe('draft, v1 prints revision 1, v3 prints revision 2');
    expect(assetUseText(user('Any', { computed: true }))).toBe(
      'draft (it computes asset names, so it may use this one)',
    );
    expect(
      assetUseText(user('Old', { draft: false, versions: [{ version_number: 2, tag: 'prod', revision: 4 }] })),
    ).toBe('prod prints revision 4');
    expect(replaceQuestion({ name: 'logo.svg', used_by: ['Branded', 'Letter', 'Footer'].map((n) => user(n)) })).toEqual(
      {
        title: 'Replace logo.svg?',
        message:
          'logo.svg is used by 3 templates (Branded, Letter, Footer). Their drafts will print the new file; published versions keep printing the file they were published with.',
      },
    );
    expect(
      replaceQuestion({ name: 'a.png', used_by: ['A', 'B', 'C', 'D', 'E'].map((n) => user(n)) }).message,
    ).toContain('used by 5 templates (A, B, C and 2 more)');
    expect(replaceQuestion({ name: 'a.png', used_by: [user('A')] }).message).toContain('used by 1 template (A)');
    expect(replaceQuestion({ name: 'a.png', used_by: [] }).message).toBe(
      'a.png already exists; no template uses it. The new file takes its place.',
    );
  });
});

describe('snippets', () => {
  const input = {
    baseUrl: 'https://pdf.example.com/',
    templateId: 'abcdefghijkl',
    data: { name: "O'Brien", paid: true, n: null, items: [{ q: 1 }] },
  };

  it('quotes data safely for the shell and never includes a key', () => {
    const { curl } = buildSnippets({ ...input, mode: 'url' });
    expect(curl).toContain("curl -sS -X POST 'https://pdf.example.com/v1/pdf/create'");
    expect(curl).toContain('"name": "O\'\\\'\'Brien"');
    expect(curl).toContain('$PRESSROOM_API_KEY');
    expect(shellQuote("a'b")).toBe("'a'\\''b'");
  });

  it('writes Python literals and picks the endpoint per mode', () => {
    expect(pythonLiteral({ a: true, b: null, c: [1, 'x'] })).toBe(
      '{\n    "a": True,\n    "b": None,\n    "c": [\n        1,\n        "x",\n    ],\n}',
    );
    const asyncSnippets = buildSnippets({ ...input, mode: 'async' });
    expect(asyncSnippets.python).toContain('/v1/pdf/create-async');
    expect(asyncSnippets.javascript).toContain('create-async');
    const binary = buildSnippets({ ...input, mode: 'binary', filename: 'out' });
    expect(binary.curl).toContain("-o 'out.pdf'");
    // The service names the bytes after it too (Content-Disposition), so the body carries it.
    expect(binary.curl).toContain('"filename": "out"');
    expect(binary.javascript).toContain('"export_type": "binary"');
    expect(binary.python).toContain('f.write(response.content)');
  });

  it('names a version by its tag, and leaves version out for the draft', () => {
    expect(buildSnippets({ ...input, mode: 'url', version: 'prod' }).curl).toContain('"version": "prod"');
    expect(buildSnippets({ ...input, mode: 'url' }).curl).not.toContain('version');
  });
});

describe('comparing versions', () => {
  const ops = (before: string, after: string) =>
    diffLines(before, after).map((l) => `${l.op === 'same' ? ' ' : l.op === 'added' ? '+' : '-'}${l.text}`);

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
    expect(folded.map((l) => (l.op === 'skip' ? `skip ${l.count}` : l.op))).toEqual([
      'skip 7',
      'same',
      'same',
      'same',
      'removed',
      'added',
      'same',
      'same',
      'same',
      'skip 6',
    ]);
  });

  it('diffs each part of a template, lists only the parts that changed, and treats unset page defaults as the defaults', () => {
    const v1 = { html: '<p>One</p>', css: null, page: null, sample_data: { a: 1 } };
    const v2 = {
      html: '<p>Two</p>',
      css: '',
      page: { format: 'A4' as const, footer_html: '<i>f</i>' },
      sample_data: { a: 1 },
    };
    const parts = diffTemplates(v1, v2);
    expect(parts.map((p) => [p.part, p.added, p.removed])).toEqual([
      ['html', 1, 1],
      ['footer_html', 1, 0],
    ]);
    expect(diffTemplates(v1, { ...v1 })).toEqual([]);
    expect(
      diffTemplates(v1, { ...v1, page: { orientation: 'landscape', margin: { top: '1cm' } } }).map((p) =>
        p.lines.filter((l) => l.op === 'added').map((l) => l.text),
      ),
    ).toEqual([['orientation: landscape', 'margin top: 1cm']]);
  });

  it("checks tags with the API's rule and names what a job rendered", () => {
    for (const tag of ['prod', 'v1', 'a-b_c', '12']) expect(isVersionTag(tag), tag).toBe(true);
    for (const tag of ['Prod', 'a', '-prod', 'prod-', 'with space', 'x'.repeat(51)])
      expect(isVersionTag(tag), tag).toBe(false);
    expect(jobVersionText({ number: 2, tag: 'prod' })).toBe('version 2 (prod)');
    expect(jobVersionText(null)).toBe('the draft');
  });
});

describe('formatting', () => {
  it('reads the rate-limit headers and signs ledger changes for people', () => {
    const headers: Record<string, string> = {
      'x-ratelimit-limit': '120',
      'x-ratelimit-remaining': '7',
      'x-ratelimit-reset': '1700000000',
    };
    expect(readRateLimit((n) => headers[n] ?? null)).toEqual({ limit: 120, remaining: 7, resetAt: 1700000000 });
    expect(readRateLimit(() => null)).toBeNull();
    expect(formatBalanceChange(1)).toBe('−1');
    expect(formatBalanceChange(-100)).toBe('+100');
  });
});

describe('e-invoices', () => {
  it("prefills the example of docs/einvoice-requests.md, and the starter's data is that invoice", () => {
    const docs = readFileSync(new URL('../../../docs/einvoice-requests.md', import.meta.url), 'utf8');
    const en16931 = /## Factur-X EN 16931\s+```json\n([\s\S]*?)\n```/.exec(docs);
    expect(en16931, 'docs/einvoice-requests.md has a Factur-X EN 16931 example').not.toBeNull();
    expect(EXAMPLE_INVOICE).toEqual(JSON.parse(en16931![1]!).einvoice.invoice);
    expect(EXAMPLE_INVOICE).toEqual(SAMPLE_INVOICE);
    expect(EINVOICE_STARTER_DATA).toEqual(EXAMPLE_INVOICE);
    expect(looksLikeInvoice(EINVOICE_STARTER_DATA)).toBe(true);
    expect(looksLikeInvoice({ invoice: { number: 'INV-001' }, items: [] })).toBe(false);
  });

  it('sends a profile only with Factur-X and ZUGFeRD, and the data or the JSON as the invoice', () => {
    const invoice = { number: '1' };
    expect(einvoiceRequest('factur-x', 'basic', invoice)).toEqual({ format: 'factur-x', profile: 'basic', invoice });
    expect(einvoiceRequest('xrechnung-cii', 'basic', invoice)).toEqual({ format: 'xrechnung-cii', invoice });
    const data = { seller: {}, buyer: {}, lines: [] };
    const draft = initialEInvoiceDraft(data);
    expect(draft).toMatchObject({ attach: false, format: 'factur-x', profile: 'en16931', source: 'data' });
    expect(initialEInvoiceDraft({ title: 'x' }).source).toBe('json');
    expect(resolveEInvoice(draft, data)).toEqual({ request: null });
    expect(resolveEInvoice({ ...draft, attach: true }, data)).toEqual({
      request: { format: 'factur-x', profile: 'en16931', invoice: data },
    });
    expect(resolveEInvoice({ ...draft, attach: true, source: 'json', json: '{"number": "7"}' }, data)).toEqual({
      request: { format: 'factur-x', profile: 'en16931', invoice: { number: '7' } },
    });
    expect(resolveEInvoice({ ...draft, attach: true, source: 'json', json: '{"number": ' }, data)).toMatchObject({
      error: expect.stringContaining('not valid JSON'),
    });
    expect(resolveEInvoice({ ...draft, attach: true, source: 'json', json: '[1]' }, data)).toMatchObject({
      error: expect.stringContaining('JSON object'),
    });
    expect(describeDelivered({ format: 'zugferd', profile: 'basic-wl' })).toBe(
      'ZUGFeRD BASIC WL, its XML embedded as factur-x.xml in a PDF/A-3b',
    );
    expect(describeDelivered({ format: 'xrechnung-cii' })).toBe(
      'XRechnung (CII): the XML itself (application/xml), no PDF',
    );
    expect(isFilledByEInvoice('einvoice.totals')).toBe(true);
    expect(isFilledByEInvoice('einvoices')).toBe(false);
  });

  it('groups the findings of a 422 by rule id, with the field inside the invoice, and leaves other refusals alone', () => {
    const body = {
      detail: [
        {
          loc: ['body', 'einvoice', 'invoice', 'lines', 2, 'vat_category'],
          msg: '[BR-CO-04] Each line needs a VAT category code',
          type: 'BR-CO-04',
        },
        {
          loc: ['body', 'einvoice', 'invoice', 'totals', 'tax_inclusive'],
          msg: '[BR-CO-15] tax_inclusive is 1460.2',
          type: 'BR-CO-15',
        },
        {
          loc: ['body', 'einvoice', 'invoice', 'lines', 0, 'vat_category'],
          msg: '[BR-CO-04] Each line needs a VAT category code',
          type: 'BR-CO-04',
        },
        { loc: ['body', 'einvoice', 'profile'], msg: 'xrechnung-cii has no profiles', type: 'value_error' },
        { loc: ['body', 'einvoice', 'invoice'], msg: 'The XML does not match its schema', type: 'xml_schema' },
        { loc: ['body', 'filename'], msg: 'bad name', type: 'value_error' },
      ],
    };
    const found = einvoiceFindings(body)!;
    expect(found.rules.map((r) => r.rule)).toEqual(['BR-CO-04', 'BR-CO-15', 'value_error', 'xml_schema']);
    expect(found.rules[0]!.findings).toEqual([
      {
        path: 'lines[2].vat_category',
        invoiceLoc: ['lines', 2, 'vat_category'],
        message: 'Each line needs a VAT category code',
      },
      {
        path: 'lines[0].vat_category',
        invoiceLoc: ['lines', 0, 'vat_category'],
        message: 'Each line needs a VAT category code',
      },
    ]);
    expect(found.rules[2]!.findings).toEqual([
      { path: 'einvoice.profile', invoiceLoc: null, message: 'xrechnung-cii has no profiles' },
    ]);
    expect(found.rules[3]!.findings[0]!.path).toBe('');
    expect(found.rest).toEqual([body.detail[5]]);
    expect(einvoiceFindings({ detail: [body.detail[5]] })).toBeNull();
    expect(einvoiceFindings({ error: 'TEMPLATE_NOT_FOUND', message: 'x' })).toBeNull();
    expect(formatPath(['a', 0, 'b', 1])).toBe('a[0].b[1]');
  });

  it("keeps the official rule set of a finding and the XPath in the caller's own XML (issue 41)", () => {
    const check = 'XRechnung 3.0.2 (KoSIT schematron 2.5.0, CII)';
    const found = einvoiceFindings({
      detail: [
        {
          loc: ['body', 'einvoice', 'xml', '/rsm:CrossIndustryInvoice[1]'],
          msg: '[BR-DE-15] Das Element "Buyer reference" (BT-10) muss übermittelt werden.',
          type: 'BR-DE-15',
          ctx: { check, locations: ['/rsm:CrossIndustryInvoice[1]'] },
        },
        {
          loc: ['body', 'einvoice', 'invoice'],
          msg: '[BR-DE-18] Skonto Zeilen … (in the XRechnung XML built from einvoice.invoice, at /rsm:CrossIndustryInvoice[1])',
          type: 'BR-DE-18',
          ctx: { check, locations: ['/rsm:CrossIndustryInvoice[1]'] },
        },
      ],
    })!;
    expect(found.rules).toEqual([
      {
        rule: 'BR-DE-15',
        check,
        findings: [
          {
            path: 'einvoice.xml',
            invoiceLoc: null,
            message: 'Das Element "Buyer reference" (BT-10) muss übermittelt werden.',
            xpath: '/rsm:CrossIndustryInvoice[1]',
          },
        ],
      },
      {
        rule: 'BR-DE-18',
        check,
        findings: [
          {
            path: '',
            invoiceLoc: [],
            message:
              'Skonto Zeilen … (in the XRechnung XML built from einvoice.invoice, at /rsm:CrossIndustryInvoice[1])',
          },
        ],
      },
    ]);
  });

  it("groups a validation report's findings by rule, and splits the official rules' warnings off a document's", () => {
    const at = (n: number) => `/rsm:CrossIndustryInvoice[1]/ram:Line[${n}]`;
    const check = {
      check: 'EN16931 1.3.16 (CEN schematron, CII)',
      status: 'failed' as const,
      findings: [
        { rule: 'BR-CO-10', severity: 'warning' as const, message: 'Sum of lines', location: at(1) },
        { rule: 'BR-16', severity: 'fatal' as const, message: 'A line is needed', location: at(2) },
        { rule: 'BR-CO-10', severity: 'fatal' as const, message: 'Sum of lines', location: at(3) },
        { rule: 'xml_schema', severity: 'fatal' as const, message: 'Unexpected element', location: '', line: 7 },
      ],
      more: 12,
    };
    expect(groupByRule(check.findings)).toEqual([
      { rule: 'BR-CO-10', severity: 'fatal', messages: [{ message: 'Sum of lines', places: [at(1), at(3)] }] },
      { rule: 'BR-16', severity: 'fatal', messages: [{ message: 'A line is needed', places: [at(2)] }] },
      { rule: 'xml_schema', severity: 'fatal', messages: [{ message: 'Unexpected element', places: ['line 7'] }] },
    ]);
    expect(countFindings(check)).toBe('3 fatal findings, 1 warning');
    expect(fatalRules([check, { check: 'x', status: 'passed', findings: [] }])).toEqual([
      'BR-16',
      'BR-CO-10',
      'xml_schema',
    ]);
    expect(describeChecks('EN16931 1.3.16')).toBe('EN16931 1.3.16');
    expect(describeChecks('built-in')).toMatch(/^built-in \(/);
    expect(isEInvoiceFile({ name: 'invoice.XML', type: '' })).toBe(true);
    expect(isEInvoiceFile({ name: 'scan', type: 'application/pdf' })).toBe(true);
    expect(isEInvoiceFile({ name: 'notes.txt', type: 'text/plain' })).toBe(false);
    const other = { code: 'ASSET_NOT_FOUND', message: 'no asset named "logo.png"' };
    expect(
      splitRuleWarnings([
        {
          code: 'EINVOICE_RULE_WARNING',
          message: '[BR-DE-27] In BT-42 sollen mindestens drei Ziffern enthalten sein. (XRechnung 3.0.2 …, at /rsm:X)',
        },
        other,
      ]),
    ).toEqual({
      rules: [
        {
          rule: 'BR-DE-27',
          message: 'In BT-42 sollen mindestens drei Ziffern enthalten sein. (XRechnung 3.0.2 …, at /rsm:X)',
        },
      ],
      rest: [other],
    });
  });

  it('finds the line of a field in the invoice JSON, or of the value around a missing one', () => {
    const text = JSON.stringify(EXAMPLE_INVOICE, null, 2);
    const lines = jsonValueLines(text);
    const at = (loc: (string | number)[]) => text.split('\n')[lineOfField(lines, loc)! - 1]!.trim();
    expect(at(['lines', 1, 'unit_code'])).toBe('"unit_code": "H87",');
    expect(at(['seller', 'address', 'city'])).toBe('"city": "Berlin",');
    expect(at(['buyer', 'vat_id'])).toBe('"buyer": {');
    expect(lineOfField(lines, ['totals', 'tax_inclusive'])).toBe(1);
    expect([...jsonValueLines('{"a\\"b": [1, {"c": "x\\\\"}],\n "d": {}}')]).toEqual([
      ['', 1],
      ['a"b', 1],
      ['a"b[0]', 1],
      ['a"b[1]', 1],
      ['a"b[1].c', 1],
      ['d', 2],
    ]);
  });

  it("writes the e-invoice into the snippets, and saves XRechnung's binary answer as XML", () => {
    const base = { baseUrl: 'https://pdf.example.com', templateId: 'abcdefghijkl', data: {}, filename: 'inv' };
    const facturx = buildSnippets({
      ...base,
      mode: 'binary',
      einvoice: { format: 'factur-x', profile: 'en16931', invoice: { number: 'RE-1' } },
    });
    expect(facturx.curl).toContain('"format": "factur-x"');
    expect(facturx.curl).toContain("-o 'inv.pdf'");
    const xrechnung = buildSnippets({
      ...base,
      mode: 'binary',
      einvoice: { format: 'xrechnung-ubl', invoice: { number: 'RE-1' } },
    });
    expect(xrechnung.curl).toContain("-o 'inv.xml'");
    expect(xrechnung.python).toContain('"inv.xml"');
    expect(buildSnippets({ ...base, mode: 'url' }).curl).not.toContain('einvoice');
  });
});

describe('places in the data, as the form names them', () => {
  const fields = [
    { key: 'customer.name', label: 'Customer name', required: true },
    {
      key: 'lines',
      label: 'Lines',
      type: 'array' as const,
      spec: [
        { name: 'unit_code', label: 'Unit code' },
        { name: 'quantity', label: 'Quantity', type: 'number' },
      ],
    },
    { key: 'tags', label: 'Tags', type: 'array' as const },
  ];

  it('finds the input of a place and names it with rows counted from 1, never lines[1]', () => {
    expect(formPlace(fields, ['customer', 'name'])).toEqual({ id: 'data-customer_name', label: 'Customer name' });
    expect(formPlace(fields, ['lines', 1, 'unit_code'])).toEqual({
      id: 'data-lines-1-unit_code',
      label: 'Unit code (Lines row 2)',
    });
    expect(formPlace(fields, ['lines', 0])).toEqual({ id: null, label: 'Lines row 1' });
    expect(formPlace(fields, ['tags', 2])).toEqual({ id: 'data-tags-2', label: 'Tags row 3' });
    expect(formPlace(fields, ['lines', 1, 'vat_rate'])).toBeNull();
    expect(describeLoc(fields, ['lines', 1, 'vat_rate'])).toBe('lines row 2 › vat_rate');
    expect(describeLoc([], ['totals', 'tax_inclusive'])).toBe('totals › tax_inclusive');
    expect(describeLoc(fields, [])).toBe('the data');
  });

  it('keeps a refusal while its value is the one refused', () => {
    const sent = { customer: { name: '' }, lines: [{ unit_code: 'H87' }, { unit_code: 'PCE' }] };
    const [name, unit] = refusalsOf(
      [
        { loc: ['customer', 'name'], message: 'empty' },
        { loc: ['lines', 1, 'unit_code'], message: 'BR-CL-23' },
      ],
      sent,
    );
    expect(valueAt({ 'customer.name': 'Flat' }, ['customer', 'name'])).toBe('Flat');
    expect(isEditedSince(name!, sent)).toBe(false);
    expect(isEditedSince(unit!, { ...sent, customer: { name: 'Ada' } })).toBe(false);
    expect(isEditedSince(unit!, { ...sent, lines: [{ unit_code: 'H87' }, { unit_code: 'H87' }] })).toBe(true);
    expect(isEditedSince(name!, { lines: [] })).toBe(true);
  });

  it('writes the initialisms of inferred labels in capitals, and leaves written labels alone', () => {
    expect(readableLabel('Payment iban')).toBe('Payment IBAN');
    expect(readableLabel('Seller vat id')).toBe('Seller VAT ID');
    expect(readableLabel('Video rate')).toBe('Video rate');
    const inferred = readableFields(
      [{ key: 'lines', label: 'Lines', spec: [{ name: 'vat_rate', label: 'Vat rate' }] }],
      true,
    );
    expect(inferred[0]!.spec![0]!.label).toBe('VAT rate');
    expect(readableFields([{ key: 'vat', label: 'Vat as I like it' }], false)[0]!.label).toBe('Vat as I like it');
  });
});

describe("the service's messages in the studio's words", () => {
  it("points to the studio's screens instead of API calls and repository paths", () => {
    expect(inStudioWords('No asset named "x" in this account; GET /v1/assets lists them.')).toBe(
      'No asset named "x" in this account; the Assets screen lists the names you have.',
    );
    expect(
      inStudioWords('Template ab has no version "nope"; GET /v1/templates/abcdefghijkl/versions lists them.'),
    ).toBe('Template ab has no version "nope"; the Versions panel lists them.');
    expect(inStudioWords('unknown filter "uper" (did you mean "upper"?); the list is in docs/templates.md')).toBe(
      'unknown filter "uper" (did you mean "upper"?)',
    );
    expect(
      knownNames({ pane: 'html', message: 'Template syntax error (line 1, column 4): unknown filter "uper"' })?.names,
    ).toContain('upper');
    expect(knownNames({ pane: 'html', message: 'unexpected token' })).toBeNull();
  });

  it('names a refused place as the screen does, keeps a domain code as a reference, and no 0-based index', () => {
    const place = (loc: readonly (string | number)[]) => (loc[0] === 'page_rotations' ? `Page ${loc[1]}` : null);
    expect(
      describeIssue(
        { loc: ['body', 'page_rotations', 2], msg: "Input should be '0', '90', '180' or '270'", type: 'enum' },
        place,
      ),
    ).toBe('Page 2: must be 0, 90, 180 or 270');
    expect(
      describeIssue({
        loc: ['body', 'pages'],
        msg: 'page 9 is outside the document, which has 1 page',
        type: 'page_out_of_range',
      }),
    ).toBe('pages: page 9 is outside the document, which has 1 page (page_out_of_range)');
    expect(describeIssue({ loc: ['body', 'pdfs', 1, 'pdf_base64'], msg: 'Not a PDF', type: 'pdf_invalid' })).toBe(
      'pdfs row 2 › pdf_base64: Not a PDF (pdf_invalid)',
    );
    expect(
      describeIssue(
        { loc: ['body', 'data', 'customer', 'name'], msg: 'Field required by the template', type: 'missing' },
        () => 'Customer name',
      ),
    ).toBe('Customer name: required by the template, and empty');
  });

  it('says which asset is missing and where to upload it, without the internal URL', () => {
    const said = describeWarning({
      code: 'ASSET_NOT_FOUND',
      message: 'This account has no asset named "logo.PNG"; GET /v1/assets lists them.',
      url: 'https://assets.pressroom.internal/a/logo.PNG',
    });
    expect(said).toEqual({
      text: 'Your asset library has no “logo.PNG” (names match exactly, capitals included).',
      link: { href: '/assets', label: 'Open Assets' },
    });
    expect(
      describeWarning(
        { code: 'MISSING_REQUIRED_FIELD', message: '"customer.name" is a required field …' },
        () => 'Customer name',
      ).text,
    ).toBe('Customer name is required and has no value: printed as a blank.');
    expect(
      describeWarning({ code: 'RESOURCE_BLOCKED', message: 'The URL is private.', url: 'https://10.0.0.1/a.png' }),
    ).toEqual({ text: 'The URL is private.', url: 'https://10.0.0.1/a.png' });
  });

  it('names a download after its template or file, as the API allows', () => {
    expect(fileNameFrom('Invoice (Factur-X EN 16931)')).toBe('Invoice-Factur-X-EN-16931');
    expect(fileNameFrom('Rechnung März')).toBe('Rechnung-Marz');
    expect(fileNameFrom('…')).toBe('document');
    expect(fileNameFrom('x'.repeat(150))).toHaveLength(100);
  });
});

describe('finishing', () => {
  const cert = { not_before: '2026-01-01T00:00:00.000Z', not_after: '2026-12-31T00:00:00.000Z' };
  it("reads a certificate's validity: valid, near its end, expired, not yet valid", () => {
    expect(validityOf(cert, Date.parse('2026-06-01T00:00:00Z'))).toEqual({ state: 'valid', label: 'valid' });
    expect(validityOf(cert, Date.parse('2026-12-21T00:00:00Z'))).toEqual({
      state: 'near-expiry',
      label: 'expires in 10 days',
    });
    expect(validityOf(cert, Date.parse('2026-12-30T12:00:00Z')).label).toBe('expires today');
    expect(validityOf(cert, Date.parse('2027-01-02T00:00:00Z')).state).toBe('expired');
    expect(validityOf(cert, Date.parse('2025-12-01T00:00:00Z')).state).toBe('not-yet-valid');
  });

  it("builds watermark, sign and protect from Run's fields, and says what is missing first", () => {
    expect(finishingRequest(EMPTY_FINISHING)).toEqual({ request: {} });
    const marked = {
      ...EMPTY_FINISHING,
      watermark: { ...EMPTY_FINISHING.watermark, on: true, text: 'DRAFT', opacity: '0.2' },
    };
    expect(finishingRequest(marked)).toEqual({ request: { watermark: { text: 'DRAFT', opacity: 0.2 } } });
    expect(finishingRequest({ ...marked, watermark: { ...marked.watermark, opacity: '2' } })).toEqual({
      error: 'Watermark: the opacity is a number from 0.05 to 1.',
    });
    const signed = {
      ...EMPTY_FINISHING,
      sign: {
        ...EMPTY_FINISHING.sign,
        on: true,
        certificate: 'ada',
        reason: ' Approved ',
        location: '',
        timestamp: true,
      },
    };
    expect(finishingRequest(signed)).toEqual({
      request: { sign: { certificate: 'ada', reason: 'Approved', timestamp: true } },
    });
    expect(finishingRequest({ ...signed, sign: { ...signed.sign, certificate: '' } })).toEqual({
      error: 'Signature: choose a certificate.',
    });
    const locked = {
      ...EMPTY_FINISHING,
      protect: { ...EMPTY_FINISHING.protect, on: true, userPassword: 'open', ownerPassword: 'owner' },
    };
    expect(finishingRequest(locked)).toEqual({
      request: { protect: { owner_password: 'owner', user_password: 'open' } },
    });
    expect(
      finishingRequest({ ...locked, protect: { ...locked.protect, userPassword: 'same', ownerPassword: 'same' } }),
    ).toMatchObject({ error: expect.stringContaining('must differ') });
    expect(finishingRequest({ ...signed, protect: locked.protect })).toMatchObject({
      error: expect.stringContaining('cannot go together'),
    });
    // An asset mark; a visible, time-stamped signature from the account's own authority; permissions only when changed.
    const byAsset = {
      ...EMPTY_FINISHING,
      watermark: {
        ...EMPTY_FINISHING.watermark,
        on: true,
        source: 'asset' as const,
        asset: 'marks/stamp.pdf',
        opacity: '0.5',
      },
    };
    expect(finishingRequest(byAsset)).toEqual({ request: { watermark: { asset: 'marks/stamp.pdf', opacity: 0.5 } } });
    expect(finishingRequest({ ...byAsset, watermark: { ...byAsset.watermark, asset: '' } })).toEqual({
      error: 'Watermark: choose an asset.',
    });
    const shown = {
      ...signed,
      sign: {
        ...signed.sign,
        tsaUrl: 'https://tsa.example.com/',
        visible: true,
        page: '2',
        x: '40',
        y: '50',
        width: '180',
        height: '50',
      },
    };
    expect(finishingRequest(shown)).toEqual({
      request: {
        sign: {
          certificate: 'ada',
          reason: 'Approved',
          timestamp: true,
          tsa_url: 'https://tsa.example.com/',
          visible: { page: 2, x: 40, y: 50, width: 180, height: 50 },
        },
      },
    });
    expect(finishingRequest({ ...shown, sign: { ...shown.sign, page: '0' } })).toMatchObject({
      error: expect.stringContaining('Visible signature'),
    });
    expect(finishingRequest({ ...shown, sign: { ...shown.sign, width: '10' } })).toMatchObject({
      error: expect.stringContaining('20 × 20'),
    });
    expect(finishingRequest({ ...shown, sign: { ...shown.sign, tsaUrl: 'tsa.example.com' } })).toMatchObject({
      error: expect.stringContaining('https://'),
    });
    const permitted = { ...locked, protect: { ...locked.protect, printing: 'low' as const, copying: true } };
    expect(finishingRequest(permitted)).toEqual({
      request: {
        protect: {
          owner_password: 'owner',
          user_password: 'open',
          permissions: { printing: 'low', copying: true, modifying: false, annotating: false, filling_forms: true },
        },
      },
    });
  });

  it('puts finishing in the snippets with the passwords as placeholders', () => {
    const finishing = forSnippet({
      watermark: { text: 'DRAFT', opacity: 0.2 },
      protect: { owner_password: 'owner-secret', user_password: 'open-me' },
    });
    const { curl } = buildSnippets({
      baseUrl: 'http://localhost:8080',
      templateId: 'tpl',
      data: {},
      mode: 'url',
      finishing,
    });
    expect(curl).toContain('"text": "DRAFT"');
    expect(curl).toContain('"owner_password": "<owner password>"');
    expect(curl).not.toContain('owner-secret');
    expect(curl).not.toContain('open-me');
  });
});
