/**
 * The compartment evaluator with ARBITRARY code in a document's compartment, as if the template
 * compiler let any through (plain template code is tested through the renderer in
 * `../sandbox-escape.test.ts`): the compartment reaches nothing outside itself, cannot change what
 * the documents after it share (the same worker evaluates them), and runs nothing after its document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { createLogger } from '../../shared/log.js';
import { openTripwire, testOptions } from '../../../test/support/documents/rendering-kit.js';
import { launchChromium, type LaunchedChromium } from '../launch-chromium.js';
import { openNetworkSinkhole, type NetworkSinkhole } from '../pages/network-sinkhole.js';
import { EvaluatorPage } from './evaluator-page.js';
import { PAGE_TEMPLATE_CACHE_SIZE } from './evaluator-page-html.js';

const logger = createLogger(process.env.TEST_LOG ?? 'silent');
const room = { logger };
let sinkhole: NetworkSinkhole;
let chromium: LaunchedChromium;
let tripwire: Awaited<ReturnType<typeof openTripwire>>;
let page: EvaluatorPage;

beforeAll(async () => {
  tripwire = await openTripwire();
  sinkhole = await openNetworkSinkhole();
  chromium = await launchChromium({
    executablePath: testOptions().chromiumPath,
    sinkholePort: sinkhole.port,
    protocolTimeoutMs: 30_000,
  });
  page = await EvaluatorPage.open(chromium.root, room);
});

afterAll(async () => {
  await page?.close();
  await chromium?.shutdown();
  await sinkhole?.close();
  await tripwire?.close();
});

/** Compiled-template-shaped code whose root runs `body` (a function body) and prints what it returns. */
function code(body: string): string {
  return `function root(env, context, frame, runtime, cb) { var out; try { out = (function () { ${body} })(); } catch (e) { out = 'THREW ' + e; } cb(null, String(out)); }\nreturn { root: root };`;
}

/** A template limit no ordinary document reaches, even on a busy machine; the runaway tests set a short one. */
const GENEROUS_MS = 10_000;
const limits = (timeoutMs = GENEROUS_MS) => ({
  timeoutMs,
  limitChars: 1 << 20,
  limitBytes: 1 << 20,
  signal: new AbortController().signal,
});

/** Evaluates `body` on the shared page (reopened if a test lost it); the output, or the AppError. */
async function run(body: string, data = '{}', timeoutMs = GENEROUS_MS): Promise<{ out?: string; error?: AppError }> {
  if (page.isLost) page = await EvaluatorPage.open(chromium.root, room);
  try {
    const { html } = await page.evaluate({ main: code(body) }, data, limits(timeoutMs));
    return { out: html.main };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { error };
  }
}

describe('a compartment reaches nothing outside itself', () => {
  it('no worker global, network, timers or message APIs, by name, through this, or through Function', async () => {
    const names = [
      'self',
      'window',
      'document',
      'postMessage',
      'fetch',
      'XMLHttpRequest',
      'WebSocket',
      'importScripts',
      'setTimeout',
      'setInterval',
      'queueMicrotask',
      'Worker',
      'indexedDB',
      'process',
      'require',
    ];
    const { out } = await run(
      `return ${JSON.stringify(names)}.map(function (n) { return typeof globalThis[n]; }).join(",") + "|" + typeof this + "|" + (function () { return typeof this; })()`,
    );
    expect(out).toBe(`${names.map(() => 'undefined').join(',')}|undefined|undefined`);
    // The compartment's own Function evaluates in the compartment: its global, not the worker's.
    expect(
      (await run('return Function("return typeof self + typeof postMessage + typeof globalThis.fetch")()')).out,
    ).toBe('undefinedundefinedundefined');
  });

  it('the function constructors reachable from values are inert', async () => {
    for (const expr of [
      '"".constructor.constructor',
      '(function () {}).constructor',
      '(async function () {}).constructor',
      '(function* () {}).constructor',
      'Object.getPrototypeOf(async function* () {}).constructor',
    ]) {
      const { out } = await run(
        `try { ${expr}("return 1")(); return "RAN"; } catch (e) { return "REFUSED " + (e instanceof TypeError); }`,
      );
      expect(out, expr).toBe('REFUSED true');
    }
  });

  it('import() and direct eval are refused before any code runs, and the next document renders', async () => {
    for (const body of ['return import("data:text/javascript,1")', 'return eval("1")']) {
      const { error } = await run(body);
      expect(error?.code).toBe('TEMPLATE_RENDER_ERROR');
    }
    expect((await run('return "NEXT"')).out).toBe('NEXT');
  });

  it('reaches no network (nothing to call, and the listener sees nothing)', async () => {
    await run(
      `try { new Image().src = "http://127.0.0.1:${tripwire.port}/" } catch (e) {} try { fetch("http://127.0.0.1:${tripwire.port}/") } catch (e) {} return "done"`,
    );
    // A connection would be on its way by now: a short wait for what must not happen.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(tripwire.hits()).toBe(0);
  });
});

describe('nothing a document does reaches the next one (the same worker evaluates both)', () => {
  it('shared intrinsics are frozen: every patch is refused; its own global and nunjucks die with it', async () => {
    const attempts = [
      'Object.prototype.leak = "LEAKED"',
      'String.prototype.toUpperCase = function () { return "HACKED" }',
      'Array.prototype.join = function () { return "EVIL" }',
      'JSON.parse = function () { return { iban: "IBAN-EVIL" } }',
      'Object.defineProperty(Object.prototype, "late", { get: function () { return "LATE" } })',
      'Promise.prototype.then = function () {}',
      'Function.prototype.call = function () {}',
      'Object.getPrototypeOf(function* () {}).next = 1',
    ];
    const body =
      `return ${JSON.stringify(attempts)}.map(function (src, i) { try { Function(src)(); return i + ":took"; } catch (e) { return i + ":refused"; } }).join(",")` +
      ' + "|" + (function () { globalThis.leaked = 1; runtimeRef = null; return "own-global-ok"; })()';
    const attack = await run(`var runtimeRef; ${body.replace('return ', 'var r = ')}; return r`);
    expect(attack.out).toBe(`${attempts.map((_, i) => `${i}:refused`).join(',')}|own-global-ok`);
    // The nunjucks runtime of this document: patch it through the root's arguments.
    const runtimePatch = await page.evaluate(
      {
        main: 'function root(env, context, frame, runtime, cb) { runtime.suppressValue = function () { return "IBAN-EVIL" }; env.opts.autoescape = false; cb(null, "patched"); }\nreturn { root: root };',
      },
      '{}',
      limits(),
    );
    expect(runtimePatch.html.main).toBe('patched');
    for (let i = 0; i < 3; i++) {
      const { out } = await run(
        'return [({}).leak, ({}).late, "x".toUpperCase(), [1, 2].join("-"), typeof globalThis.leaked, JSON.parse("{\\"a\\":1}").a].join("|")',
      );
      expect(out).toBe('||X|1-2|undefined|1');
    }
    // The data and the runtime of the next document are its own: escaped, not rewritten.
    const { html } = await page.evaluate(
      {
        main: 'function root(env, context, frame, runtime, cb) { cb(null, "[" + runtime.suppressValue(runtime.contextOrFrameLookup(context, frame, "iban"), env.opts.autoescape) + "]"); }\nreturn { root: root };',
      },
      '{"iban":"IBAN-GOOD<b>"}',
      limits(),
    );
    expect(html.main).toBe('[IBAN-GOOD&lt;b&gt;]');
  });

  it('promise jobs a document queued have run before its answer, on its own objects only', async () => {
    const first = await run(
      'var box = { v: "before" }; Promise.resolve().then(function () { box.v = "after"; globalThis.late = 1; }); return "returned"',
    );
    expect(first.out).toBe('returned');
    expect((await run('return typeof globalThis.late + "|" + typeof box')).out).toBe('undefined|undefined');
  });

  it.each([
    ['an endless loop', 'for (;;) {}'],
    [
      'an endless promise chain',
      'Promise.resolve().then(function f() { return Promise.resolve().then(f); }); return "returned"',
    ],
    [
      'a long synchronous job queued after the return',
      'Promise.resolve().then(function () { for (;;) {} }); return "returned"',
    ],
  ])('%s: TEMPLATE_TIMEOUT at the limit; its page is replaced and the next document renders', async (_name, body) => {
    // None of these ends by itself: an answer at all means the limit stopped it.
    const { error } = await run(body, '{}', 1_000);
    expect(error?.code).toBe('TEMPLATE_TIMEOUT');
    expect(page.isLost).toBe(true);
    expect((await run('return "NEXT"')).out).toBe('NEXT');
  });

  it('a document exhausting memory fails as TEMPLATE_RENDER_ERROR or TEMPLATE_TIMEOUT; its page is replaced', async () => {
    const { error } = await run('var a = []; for (;;) a.push(new Array(1e7).fill(1.5));', '{}', 30_000);
    expect(['TEMPLATE_RENDER_ERROR', 'TEMPLATE_TIMEOUT']).toContain(error?.code);
    expect(page.isLost).toBe(true);
    expect((await run('return "AFTER-OOM"')).out).toBe('AFTER-OOM');
  });
});

describe('compiled templates the page keeps between documents', () => {
  it('each document gets its own templates, past the page cache size and with a part repeated', async () => {
    const count = PAGE_TEMPLATE_CACHE_SIZE + 8;
    // Twice round more templates than the page keeps: the first round sends every one, the second
    // finds the early ones evicted and the late ones held, in step with Node.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < count; i++) {
        const { html } = await page.evaluate(
          { main: code(`return "T${i}:" + JSON.parse(${JSON.stringify('"x"')})`) },
          '{}',
          limits(),
        );
        expect(html.main).toBe(`T${i}:x`);
      }
    }
    const repeated = code('return "SAME"');
    const { html } = await page.evaluate(
      { main: code('return "MAIN"'), header: repeated, footer: repeated },
      '{}',
      limits(),
    );
    expect(html).toEqual({ main: 'MAIN', header: 'SAME', footer: 'SAME' });
  });
});
