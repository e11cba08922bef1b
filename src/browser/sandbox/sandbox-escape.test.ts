/**
 * Template code must never reach the server, and nothing may survive from one document into the
 * next: escape payloads, prototype pollution, cross-document tampering, runaway templates.
 *
 * Against the evaluator: a fresh SES Compartment per document in a reused, locked-down page, where
 * every function constructor reachable from a value is inert and every shared prototype is frozen.
 * `browser/sandbox/evaluator-compartment.test.ts` goes further with arbitrary code, as if the compiler
 * let any through. (Until issue 51 these ran against a second evaluator too, a Web Worker per
 * document, kept for tests only: it is gone.)
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { pdfText, startTestRenderer } from '../../../test/support/documents/rendering-kit.js';
import type { PdfRenderer, RenderRequest } from '../../rendering/pdf-renderer.js';

const SECRET = `sekrit-${randomUUID()}`;
let renderer: PdfRenderer;

/**
 * The runaway templates below wait for this limit, so it is short; long enough, though, that an
 * ordinary document on a busy machine stays well inside it (1.5 s was not: seen timing out).
 */
const TEMPLATE_LIMIT_MS = 3_000;

beforeAll(async () => {
  process.env.PRESSROOM_TEST_SECRET = SECRET;
  renderer = await startTestRenderer({ concurrency: 2, templateTimeoutMs: TEMPLATE_LIMIT_MS });
});

afterAll(async () => {
  delete process.env.PRESSROOM_TEST_SECRET;
  await renderer?.close();
});

/**
 * Renders and returns the PDF text, or the AppError the render failed with. With `printed: false`
 * the document is only evaluated (`renderHtml`) and its HTML returned: enough where only what the
 * template code could reach is in question, and a print less on a busy machine.
 */
async function attempt(
  renderer: PdfRenderer,
  req: RenderRequest,
  printed = true,
): Promise<{ text?: string; error?: AppError }> {
  try {
    if (!printed) return { text: await renderer.renderHtml(req) };
    const { pdf } = await renderer.render(req);
    return { text: pdfText(pdf) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { error };
  }
}

const normal = (renderer: PdfRenderer, marker: string) =>
  renderer.render({ template: { html: '<p>{{ m }}</p>' }, data: { m: marker } }).then(({ pdf }) => pdfText(pdf));
/** The same document evaluated but not printed: enough where only the evaluator is in question. */
const normalHtml = (renderer: PdfRenderer, marker: string) =>
  renderer.renderHtml({ template: { html: '<p>{{ m }}</p>' }, data: { m: marker } });

describe('escape payloads find no server', () => {
  const payloads = [
    '{{ range.constructor("return process.pid")() }}',
    "{{ range.constructor(\"return require('child_process').execSync('id').toString()\")() }}",
    '{{ "".constructor.constructor("return process.env.PRESSROOM_TEST_SECRET")() }}',
    '{{ cycler.constructor("return process.mainModule")() }}',
    '{{ joiner.constructor("return globalThis.process.env")() }}',
    '{{ lipsum.constructor("return this.process.pid")() }}',
    '{{ (0).constructor.constructor("return this")().process.pid }}',
    '{{ [].constructor.constructor("return typeof module + require.main")() }}',
    '{% macro m() %}{{ caller.constructor("return process.pid")() }}{% endmacro %}{% call m() %}x{% endcall %}',
    '{{ self }}{{ self.constructor }}{{ "".__proto__.constructor.constructor("return process.pid")() }}',
    '{{ range.constructor("return import(\'node:fs\')")() }}',
  ];

  it.each(payloads)('%s', async (html) => {
    const { text, error } = await attempt(renderer, { template: { html }, data: {} }, false);
    if (error) expect(error.code).toMatch(/^TEMPLATE_(RENDER_ERROR|TIMEOUT)$/);
    const seen = `${text ?? ''} ${error?.message ?? ''}`;
    expect(seen).not.toContain(SECRET);
    expect(seen).not.toMatch(new RegExp(`\\b${process.pid}\\b`));
    expect(seen).not.toMatch(/uid=\d+/);
  });
});

describe('what a payload that reaches Function gets', () => {
  it('(compartment) nothing: every function constructor reachable from a value is inert, with a clear template error', async () => {
    for (const html of [
      '{{ "".constructor.constructor("return 1")() }}',
      '{{ range.constructor("return 1")() }}',
      '{{ cycler.constructor.constructor("return 1")() }}',
      '{% macro m() %}{{ caller.constructor("return 1")() }}{% endmacro %}{% call m() %}x{% endcall %}',
    ]) {
      const { text, error } = await attempt(renderer, { template: { html }, data: {} });
      expect(text).toBeUndefined();
      expect(error?.code).toBe('TEMPLATE_RENDER_ERROR');
      expect(error?.message).toMatch(/not a valid constructor/);
    }
  });
});

/**
 * Prototype patches in plain template code: nunjucks hands out the intrinsic prototypes
 * (`{}.__proto__`) and their methods, so `__defineGetter__` would patch them; a compartment refuses:
 * its shared prototypes are frozen.
 */
const PLAIN_PATCHES =
  '{% macro evil() %}IBAN-EVIL{% endmacro %}' +
  '{{ {}.__proto__.__defineGetter__("leak", evil) }}{{ "".__proto__.__defineGetter__("leak2", evil) }}' +
  '{{ [].__proto__.__defineGetter__("leak3", evil) }}{{ "".__proto__.__defineGetter__("toUpperCase", evil) }}';

describe('nothing survives from one document to the next', () => {
  it('keeps __proto__ keys in data as plain properties, polluting nothing', async () => {
    const data = JSON.parse(
      '{"__proto__": {"polluted": "YES"}, "a": {}, "constructor": {"prototype": {"polluted": "YES"}}}',
    ) as unknown;
    const { text } = await attempt(renderer, {
      template: { html: '[{{ polluted }}][{{ a.polluted }}][{{ {}.polluted }}][{{ __proto__.polluted }}]' },
      data,
    });
    expect(text).toContain('[][][][YES]');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('prototype patches made in plain template code are gone in the next document', async () => {
    const attack = await attempt(renderer, {
      template: { html: `${PLAIN_PATCHES}[{{ {}.leak }}][{{ "".leak2 }}][{{ [].leak3 }}][{{ "".toUpperCase }}]` },
      data: {},
    });
    // Not even in their own document: the shared prototypes are frozen...
    expect(attack.error?.code).toBe('TEMPLATE_RENDER_ERROR');
    // ...and in no other, on either slot.
    const later = await Promise.all(
      Array.from({ length: 4 }, () =>
        attempt(renderer, {
          template: { html: '[{{ {}.leak }}][{{ "".leak2 }}][{{ [].leak3 }}][{{ "x" | upper }}][{{ iban }}]' },
          data: { iban: 'IBAN-GOOD' },
        }),
      ),
    );
    for (const { text, error } of later) {
      expect(error).toBeUndefined();
      expect(text).toContain('[][][][X][IBAN-GOOD]');
    }
    expect(({} as Record<string, unknown>).leak).toBeUndefined();
  });

  it('a scripted document cannot tamper with the documents printed after it (cross-account)', async () => {
    // (In the evaluator every patch is refused with an error — tested above — so only the printed part attacks.)
    // In the printed document: timers rewriting text, patched prototypes, storage, popups.
    const evil = `<p>IBAN-GOOD</p><div id="out"></div><script>
      String.prototype.replace = function () { return 'IBAN-EVIL'; };
      const rewrite = () => { for (const p of document.querySelectorAll('p')) p.textContent = 'IBAN-EVIL'; };
      setInterval(rewrite, 1); rewrite();
      try { localStorage.setItem('stolen', 'IBAN-EVIL'); } catch (e) {}
      try { document.cookie = 'stolen=IBAN-EVIL'; } catch (e) {}
      try { window.open('about:blank'); } catch (e) {}
      try { new BroadcastChannel('pressroom').postMessage('IBAN-EVIL'); } catch (e) {}
    </script>`;
    const first = await attempt(renderer, { template: { html: evil }, data: {} });
    expect(first.error).toBeUndefined();
    expect(first.text).toContain('IBAN-EVIL'); // it did run, in its own document
    const victims: string[] = await Promise.all([
      normal(renderer, 'IBAN-GOOD'),
      normal(renderer, 'IBAN-GOOD'),
      renderer
        .render({
          template: {
            html: '<p id="v">IBAN-GOOD</p><p id="s"></p><script>document.getElementById("s").textContent = "storage:" + (localStorage.getItem("stolen") || "clean") + " cookie:" + (document.cookie || "clean");</script>',
          },
          data: {},
        })
        .then(({ pdf }) => pdfText(pdf)),
    ]);
    // The attack's timers ran every millisecond: give them a moment in which they would have had to
    // act (a short fixed wait, because what is checked is that nothing happens), then print again.
    await new Promise((resolve) => setTimeout(resolve, 100));
    victims.push(await normal(renderer, 'IBAN-GOOD'));
    victims.push(
      await renderer
        .render({ template: { html: '[{{ {}.leak }}][{{ "".leak2 }}][{{ iban }}]' }, data: { iban: 'IBAN-GOOD' } })
        .then(({ pdf }) => pdfText(pdf)),
    );
    for (const text of victims) {
      expect(text).toContain('IBAN-GOOD');
      expect(text).not.toContain('IBAN-EVIL');
    }
    expect(victims[2]).toContain('storage:clean cookie:clean');
    expect(victims[4]).toContain('[][][IBAN-GOOD]');
  });
});

describe('text that looks like code is only text', () => {
  it('HTML comments, import( and eval( in template text and strings render as written', async () => {
    const html =
      '<!-- a note --><p>see import(2024) and eval(x) --&gt; {{ "q<!--r-->s import (t) eval (u) /* v */" }} {{ note }}</p>';
    const { text, error } = await attempt(renderer, {
      template: { html },
      data: { note: 'import(w) <!-- x -->' },
    });
    expect(error).toBeUndefined();
    expect(text).toContain('see import(2024) and eval(x) -->');
    expect(text).toContain('q<!--r-->s import (t) eval (u) /* v */');
    expect(text).toContain('import(w) <!-- x -->');
  });
});

describe('printed documents', () => {
  it('a document asking for a reload or redirect prints itself, and cannot blank the documents printed after it', async () => {
    const printed = new Map<string, string>();
    const printNormal = async (marker: string) => printed.set(marker, await normal(renderer, marker));
    // A reload (of the page's own URL), and a redirect to about:blank at once and after a delay.
    const refreshes = ['0', '0;url=about:blank', '1;url=about:blank'];
    for (const [i, refresh] of refreshes.entries()) {
      const meta = `<meta http-equiv="refresh" content="${refresh}">`;
      const scriptless = await attempt(renderer, { template: { html: `${meta}<p>FIRST</p>` }, data: {} });
      expect(scriptless.error).toBeUndefined();
      expect(scriptless.text).toContain('FIRST');
      await Promise.all([printNormal(`SECOND-${i}-A`), printNormal(`SECOND-${i}-B`)]);
    }
    // A scripted document gets a page of its own; a refresh there (a reload, or to about:blank)
    // must not fail it or print it blank either.
    for (const refresh of ['0', '0;url=about:blank']) {
      const scripted = await attempt(renderer, {
        template: {
          html: `<meta http-equiv="refresh" content="${refresh}"><p>FIRST</p><script>document.body.append('SCRIPT-RAN')</script>`,
        },
        data: {},
      });
      expect(scripted.error).toBeUndefined();
      expect(scripted.text).toMatch(/FIRST[\s\S]*SCRIPT-RAN/);
    }
    // A refresh that was not refused would navigate its page once its delay (1 s at most here) has
    // passed: wait that out (a fixed wait, because what is checked is that nothing happens), then
    // print on both slots again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await Promise.all([printNormal('THIRD-A'), printNormal('THIRD-B')]);
    expect(printed.size).toBe(refreshes.length * 2 + 2);
    for (const [marker, text] of printed) expect(text).toContain(marker);
  });

  it('script-less documents print with JavaScript off, including handlers and srcdoc frames', async () => {
    const { text } = await attempt(renderer, {
      template: {
        html: '<p id="t">STATIC</p><img src="data:," onerror="document.getElementById(\'t\').textContent=\'RAN\'"><iframe srcdoc="&lt;p&gt;FRAME&lt;/p&gt;&lt;script&gt;document.body.textContent=\'RAN\'&lt;/script&gt;"></iframe>',
      },
      data: {},
    });
    expect(text).toContain('STATIC');
    expect(text).not.toContain('RAN');
  });
});

describe('runaway templates are stopped while other renders complete', () => {
  const cases: [string, string, string[]][] = [
    ['a huge range', '{% for i in range(0, 20000000) %}{% endfor %}', ['TEMPLATE_TIMEOUT']],
    // nunjucks builds the list first: past V8's array limit that is an error, if the clock does not stop it first.
    [
      'a range longer than any list',
      '{% for i in range(0, 900000000) %}{% endfor %}',
      ['TEMPLATE_RENDER_ERROR', 'TEMPLATE_TIMEOUT'],
    ],
    [
      'an endless nested loop',
      '{% for i in range(0, 100000) %}{% for j in range(0, 100000) %}{% endfor %}{% endfor %}',
      ['TEMPLATE_TIMEOUT'],
    ],
    // In a compartment the payload cannot even start: refused at once, not timed out.
    [
      'an endless loop through Function, refused',
      '{{ "".constructor.constructor("for (;;) {}")() }}',
      ['TEMPLATE_RENDER_ERROR'],
    ],
    [
      'exponential macro recursion',
      '{% macro r(n) %}{% if n > 0 %}{{ r(n - 1) }}{{ r(n - 1) }}{% endif %}{% endmacro %}{{ r(40) }}',
      ['TEMPLATE_TIMEOUT'],
    ],
    [
      'a macro calling itself forever',
      '{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}',
      ['TEMPLATE_RENDER_ERROR', 'TEMPLATE_TIMEOUT'],
    ],
    ['a gigantic center()', '{{ "a" | center(100000000) }}', ['TEMPLATE_TIMEOUT', 'TEMPLATE_OUTPUT_TOO_LARGE']],
    [
      'output over the limit',
      '{% for i in range(0, 3000) %}{{ "x" | center(1000) }}{% endfor %}',
      ['TEMPLATE_OUTPUT_TOO_LARGE'],
    ],
    [
      'allocating without end in plain template code',
      '{% set s = "x" | center(10000000) %}{% set a = [] %}{% for i in range(0, 1000) %}{{ a.push(s.split("")) and "" }}{% endfor %}',
      ['TEMPLATE_RENDER_ERROR', 'TEMPLATE_TIMEOUT'],
    ],
    [
      'string doubling past V8 limits',
      '{% set s = "xxxxxxxx" %}{% for i in range(0, 40) %}{% set s = s + s %}{% endfor %}{{ s | length }}',
      ['TEMPLATE_OUTPUT_TOO_LARGE', 'TEMPLATE_TIMEOUT'],
    ],
  ];
  it.each(cases)('%s', async (_name, html, codes) => {
    const marker = `still-fine-${randomUUID()}`;
    // The runaway takes one slot and an ordinary document the other. The runaway ends with its own
    // template error, never the render deadline's RENDER_TIMEOUT: the template limit stopped it.
    const [bad, good] = await Promise.all([
      attempt(renderer, { template: { html }, data: {} }, false),
      normalHtml(renderer, marker),
    ]);
    expect(codes).toContain(bad.error?.code);
    expect(bad.error?.message).not.toMatch(/\/work|node_modules/);
    expect(good).toContain(marker);
    // And both slots, the one that ran it included, are usable again (twice over, so a renderer
    // that dies late, after its answer, would be caught here). Only the evaluator page was in
    // danger, so the documents are evaluated, not printed.
    for (const round of [1, 2]) {
      const after = await Promise.all([
        normalHtml(renderer, `after-${round}-a`),
        normalHtml(renderer, `after-${round}-b`),
      ]);
      expect(after[0]).toContain(`after-${round}-a`);
      expect(after[1]).toContain(`after-${round}-b`);
    }
  });
});
