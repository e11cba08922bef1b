/**
 * Template code must never reach the server, and nothing may survive from one document into the
 * next: escape payloads, prototype pollution, cross-document tampering, runaway templates.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors.js';
import { pdfText, testRenderer } from './__fixtures__/test-kit.js';
import type { PdfRenderer, RenderRequest } from './pdf-renderer.js';

const SECRET = `sekrit-${randomUUID()}`;
let renderer: PdfRenderer;

beforeAll(async () => {
  process.env.PRESSROOM_TEST_SECRET = SECRET;
  renderer = testRenderer({ concurrency: 2, templateTimeoutMs: 1_500 });
  await renderer.warmUp();
});

afterAll(async () => {
  delete process.env.PRESSROOM_TEST_SECRET;
  await renderer.close();
});

/** Renders and returns the PDF text, or the AppError the render failed with. */
async function attempt(req: RenderRequest): Promise<{ text?: string; error?: AppError }> {
  try {
    const { pdf } = await renderer.render(req);
    return { text: pdfText(pdf) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { error };
  }
}

const normal = (marker: string) => renderer.render({ template: { html: '<p>{{ m }}</p>' }, data: { m: marker } }).then(({ pdf }) => pdfText(pdf));

describe('escape payloads find no server', () => {
  const payloads = [
    '{{ range.constructor("return process.pid")() }}',
    '{{ range.constructor("return require(\'child_process\').execSync(\'id\').toString()")() }}',
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
    const { text, error } = await attempt({ template: { html }, data: {} });
    if (error) expect(error.code).toMatch(/^TEMPLATE_(RENDER_ERROR|TIMEOUT)$/);
    const seen = `${text ?? ''} ${error?.message ?? ''}`;
    expect(seen).not.toContain(SECRET);
    expect(seen).not.toMatch(new RegExp(`\\b${process.pid}\\b`));
    expect(seen).not.toMatch(/uid=\d+/);
  });

  it('a payload that reaches Function runs in a worker with no process, require, window or network', async () => {
    const probe =
      '{{ "".constructor.constructor("return [typeof process, typeof require, typeof module, typeof window, typeof document, ' +
      'typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof importScripts, typeof indexedDB, String(self.origin)].join(\'|\')")() }}';
    const { text } = await attempt({ template: { html: probe }, data: {} });
    expect(text).toContain('undefined|undefined|undefined|undefined|undefined|undefined|undefined|undefined|undefined|undefined|null');
  });
});

describe('nothing survives from one document to the next', () => {
  it('keeps __proto__ keys in data as plain properties, polluting nothing', async () => {
    const data = JSON.parse('{"__proto__": {"polluted": "YES"}, "a": {}, "constructor": {"prototype": {"polluted": "YES"}}}') as unknown;
    const { text } = await attempt({ template: { html: '[{{ polluted }}][{{ a.polluted }}][{{ {}.polluted }}][{{ __proto__.polluted }}]' }, data });
    expect(text).toContain('[][][][YES]');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('prototype and runtime patches made by one template are gone in the next', async () => {
    const attack = await attempt({
      template: {
        html:
          '{{ "".constructor.constructor("Object.prototype.leak = \'LEAKED\'; String.prototype.toUpperCase = function () { return \'HACKED\' };' +
          ' Array.prototype.join = function () { return \'IBAN-EVIL\' }; setInterval(function () { Object.prototype.leak2 = 1 }, 1); ' +
          'try { nunjucks.runtime.suppressValue = function () { return \'IBAN-EVIL\' } } catch (e) {} return typeof nunjucks")() }}',
      },
      data: {},
    });
    expect(attack.text).toContain('undefined'); // the runtime is not even reachable as a global
    for (let i = 0; i < 4; i++) {
      const { text } = await attempt({ template: { html: '[{{ {}.leak }}][{{ {}.leak2 }}][{{ "x" | upper }}][{{ iban }}]' }, data: { iban: 'IBAN-GOOD' } });
      expect(text).toContain('[][][X][IBAN-GOOD]');
    }
    expect(({} as Record<string, unknown>).leak).toBeUndefined();
  });

  it('a scripted document cannot tamper with the documents printed after it (cross-account)', async () => {
    // In the evaluator: patch prototypes and (if it can reach it) the nunjucks runtime of its worker.
    const patchRuntime =
      'Object.prototype.iban = "IBAN-EVIL"; String.prototype.toString = function () { return "IBAN-EVIL" };' +
      ' var f = arguments.callee; try { while (f && !(f.arguments && f.arguments[3] && f.arguments[3].suppressValue)) f = f.caller; } catch (e) { f = null; }' +
      ' if (f) { f.arguments[3].suppressValue = function () { return "IBAN-EVIL" }; } return ""';
    // In the printed document: timers rewriting text, patched prototypes, storage, popups.
    const evil = `{{ "".constructor.constructor(${JSON.stringify(patchRuntime)})() }}<p>IBAN-GOOD</p><div id="out"></div><script>
      String.prototype.replace = function () { return 'IBAN-EVIL'; };
      const rewrite = () => { for (const p of document.querySelectorAll('p')) p.textContent = 'IBAN-EVIL'; };
      setInterval(rewrite, 1); rewrite();
      try { localStorage.setItem('stolen', 'IBAN-EVIL'); } catch (e) {}
      try { document.cookie = 'stolen=IBAN-EVIL'; } catch (e) {}
      try { window.open('about:blank'); } catch (e) {}
      try { new BroadcastChannel('pressroom').postMessage('IBAN-EVIL'); } catch (e) {}
    </script>`;
    const first = await attempt({ template: { html: evil }, data: {} });
    expect(first.text).toContain('IBAN-EVIL'); // it did run, in its own document
    const victims = await Promise.all([
      normal('IBAN-GOOD'),
      normal('IBAN-GOOD'),
      renderer
        .render({
          template: {
            html: '<p id="v">IBAN-GOOD</p><p id="s"></p><script>document.getElementById("s").textContent = "storage:" + (localStorage.getItem("stolen") || "clean") + " cookie:" + (document.cookie || "clean");</script>',
          },
          data: {},
        })
        .then(({ pdf }) => pdfText(pdf)),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    victims.push(await normal('IBAN-GOOD'));
    for (const text of victims) {
      expect(text).toContain('IBAN-GOOD');
      expect(text).not.toContain('IBAN-EVIL');
    }
    expect(victims[2]).toContain('storage:clean cookie:clean');
  });

  it('a document asking for a reload or redirect cannot blank the documents printed after it', async () => {
    for (const refresh of ['0', '0;url=https://render.pressroom.invalid/', '1;url=about:blank']) {
      const first = await attempt({ template: { html: `<meta http-equiv="refresh" content="${refresh}"><p>FIRST</p>` }, data: {} });
      expect(first.text).toContain('FIRST');
      const later = await Promise.all([normal('SECOND-A'), normal('SECOND-B')]);
      await new Promise((resolve) => setTimeout(resolve, 150));
      later.push(await normal('THIRD'));
      expect(later.join()).toMatch(/SECOND-A[\s\S]*SECOND-B[\s\S]*THIRD/);
    }
  });

  it('script-less documents print with JavaScript off, including handlers and srcdoc frames', async () => {
    const { text } = await attempt({
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
  it.each([
    ['a huge range', '{% for i in range(0, 20000000) %}{% endfor %}', ['TEMPLATE_TIMEOUT']],
    ['an endless loop through Function', '{{ "".constructor.constructor("for (;;) {}")() }}', ['TEMPLATE_TIMEOUT']],
    ['exponential macro recursion', '{% macro r(n) %}{% if n > 0 %}{{ r(n - 1) }}{{ r(n - 1) }}{% endif %}{% endmacro %}{{ r(40) }}', ['TEMPLATE_TIMEOUT']],
    ['a macro calling itself forever', '{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}', ['TEMPLATE_RENDER_ERROR', 'TEMPLATE_TIMEOUT']],
    ['a gigantic center()', '{{ "a" | center(100000000) }}', ['TEMPLATE_TIMEOUT', 'TEMPLATE_OUTPUT_TOO_LARGE']],
    ['output over the limit', '{% for i in range(0, 3000) %}{{ "x" | center(1000) }}{% endfor %}', ['TEMPLATE_OUTPUT_TOO_LARGE']],
    ['allocating without end (the evaluator renderer runs out of memory)', '{{ "".constructor.constructor("var a = []; for (;;) a.push(new Array(1e7).fill(1.5));")() }}', ['TEMPLATE_RENDER_ERROR', 'TEMPLATE_TIMEOUT']],
    ['string doubling past V8 limits', '{% set s = "xxxxxxxx" %}{% for i in range(0, 40) %}{% set s = s + s %}{% endfor %}{{ s | length }}', ['TEMPLATE_OUTPUT_TOO_LARGE', 'TEMPLATE_TIMEOUT']],
  ])('%s', async (_name, html, codes) => {
    const started = Date.now();
    const bad = attempt({ template: { html }, data: {} });
    const good = normal(`still-fine-${started}`).then((text) => ({ text, at: Date.now() }));
    const [badResult, goodResult] = await Promise.all([bad, good]);
    expect(codes).toContain(badResult.error?.code);
    expect(badResult.error?.message).not.toMatch(/\/work|node_modules/);
    expect(goodResult.text).toContain(`still-fine-${started}`);
    expect(Date.now() - started).toBeLessThan(10_000);
    // And the slot that ran it is usable again.
    expect(await normal('after')).toContain('after');
  });
});
