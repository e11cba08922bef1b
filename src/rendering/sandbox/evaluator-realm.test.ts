/**
 * The ShadowRealm evaluator with ARBITRARY code in the realm, as if the template compiler let any
 * through (plain template code is tested through the renderer in `../sandbox-escape.test.ts`):
 * the realm reaches nothing outside itself, runs nothing after its document, and leaves nothing
 * for the next one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { createLogger } from '../../shared/log.js';
import { openTripwire, testOptions } from '../__fixtures__/test-kit.js';
import { launchChromium, type LaunchedChromium } from '../chromium/launch-chromium.js';
import { openNetworkSinkhole, type NetworkSinkhole } from '../chromium/network-sinkhole.js';
import { EvaluatorPage } from './evaluator-page.js';
import { REALM_GLOBALS } from './evaluator-script.js';

const logger = createLogger(process.env.TEST_LOG ?? 'silent');
const room = { logger };
let sinkhole: NetworkSinkhole;
let chromium: LaunchedChromium;
let tripwire: Awaited<ReturnType<typeof openTripwire>>;
let page: EvaluatorPage;

beforeAll(async () => {
  tripwire = await openTripwire();
  sinkhole = await openNetworkSinkhole();
  chromium = await launchChromium({ executablePath: testOptions().chromiumPath, sinkholePort: sinkhole.port, protocolTimeoutMs: 30_000 });
  page = await EvaluatorPage.open(chromium.root, room, { preferred: 'shadow-realm', logger });
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

/** Evaluates `body` on the shared page (reopened if a test lost it); the output, or the AppError. */
async function run(body: string, timeoutMs = 1_500): Promise<{ out?: string; error?: AppError; ms: number }> {
  if (page.isLost) page = await EvaluatorPage.open(chromium.root, room, { preferred: 'shadow-realm', logger });
  const started = Date.now();
  try {
    const { html } = await page.evaluate({ main: code(body) }, '{}', { timeoutMs, limitChars: 1 << 20, limitBytes: 1 << 20, signal: new AbortController().signal });
    return { out: html.main, ms: Date.now() - started };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { error, ms: Date.now() - started };
  }
}

it('runs in a ShadowRealm (Chromium launched with ShadowRealm enabled)', () => {
  expect(page.kind).toBe('shadow-realm');
});

describe('the realm reaches nothing outside itself', () => {
  it('its global holds only the allowlisted ECMAScript intrinsics, with nothing on its prototype chain', async () => {
    const { out } = await run(
      'var chain = []; for (var p = Object.getPrototypeOf(globalThis); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) chain = chain.concat(Reflect.ownKeys(p).map(String));' +
        ' return JSON.stringify({ own: Reflect.ownKeys(globalThis).map(String), chain: chain })',
    );
    const { own, chain } = JSON.parse(out!) as { own: string[]; chain: string[] };
    expect(own.length).toBeGreaterThan(20);
    expect(own.filter((name) => !REALM_GLOBALS.includes(name))).toEqual([]);
    expect(chain).toEqual([]);
  });

  it('no window, document, network, timers, microtask or message APIs, by name or through the global', async () => {
    const names = ['window', 'self', 'document', 'navigator', 'location', 'fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'importScripts',
      'Worker', 'SharedWorker', 'BroadcastChannel', 'MessageChannel', 'postMessage', 'indexedDB', 'caches', 'setTimeout', 'setInterval',
      'requestAnimationFrame', 'requestIdleCallback', 'queueMicrotask', 'structuredClone', 'reportError', 'console', 'eval', 'ShadowRealm',
      'FinalizationRegistry', 'WeakRef', 'WebAssembly', 'Atomics', 'SharedArrayBuffer', 'AbortSignal', 'EventTarget', 'nunjucks', 'process', 'require'];
    const { out } = await run(
      `var names = ${JSON.stringify(names)}, g = globalThis, byName = [${names.map((n) => `typeof ${n}`).join(', ')}];` +
        ' return names.map(function (n, i) { return byName[i] + "/" + typeof g[n] + "/" + (n in g); }).join("|")',
    );
    expect(out).toBe(names.map(() => 'undefined/undefined/false').join('|'));
  });

  it('refuses every way to create code from strings, with errors of its own realm', async () => {
    const { out } = await run(
      'var kinds = [function () {}, async function () {}, function* () {}, async function* () {}].map(function (f) { return f.constructor; });' +
        ' kinds.push(Function, (0).constructor.constructor, Object.getPrototypeOf(function () {}).constructor);' +
        ' return kinds.map(function (F) { try { F("return 1"); return "RAN" } catch (e) { return e instanceof TypeError && e.constructor.constructor === Function ? "refused" : "foreign error" } }).join(",")',
    );
    expect(out).toBe('refused,refused,refused,refused,refused,refused,refused');
  });

  it('import() is not code a realm can hold: a template error, and the page lives on', async () => {
    for (const expression of ['import("data:text/javascript,export default 1")', 'import.meta', 'imp\\u006frt("data:text/javascript,1")', '"import(1)"']) {
      const { out, error } = await run(`return String(${expression})`);
      if (expression.startsWith('"')) expect(out).toBe('import(1)'); // a string keeps its meaning
      else expect(error?.code ?? `ran: ${out}`).toBe('TEMPLATE_RENDER_ERROR');
      expect(page.isLost).toBe(false);
    }
  });

  it('stack traces show no frame outside the realm', async () => {
    const { out } = await run(
      'Error.stackTraceLimit = Infinity; Error.prepareStackTrace = function (e, frames) { return frames; }; var frames = new Error("x").stack;' +
        ' var fnProto = Object.getPrototypeOf(function () {});' +
        ' return frames.length + ":" + frames.every(function (f) { var t = f.getThis(), fn = f.getFunction();' +
        '   return (t === undefined || t instanceof Object) && (fn === undefined || Object.getPrototypeOf(fn) === fnProto); })',
    );
    expect(out).toMatch(/^\d+:true$/);
  });

  it('reaches no network (nothing to call, and the listener sees nothing)', async () => {
    const url = `http://127.0.0.1:${tripwire.port}/realm`;
    const { out } = await run(
      `var u = ${JSON.stringify(url)}, tried = [];` +
        ' ["fetch", "XMLHttpRequest", "WebSocket", "EventSource", "importScripts", "Image"].forEach(function (n) { if (typeof globalThis[n] === "function") { tried.push(n); try { globalThis[n](u) } catch (e) {} } });' +
        ' return "tried:" + tried.join(",")',
    );
    expect(out).toBe('tried:');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(tripwire.hits()).toBe(0);
  });
});

describe('nothing runs after its document and nothing is left for the next', () => {
  it('patches to intrinsics, JSON, the global and the nunjucks runtime are gone in the next document', async () => {
    const attack = await run(
      'Object.prototype.leak = "LEAKED"; String.prototype.toUpperCase = function () { return "HACKED" };' +
        ' Array.prototype.join = function () { return "EVIL" }; JSON.parse = function () { return { iban: "IBAN-EVIL" } };' +
        ' globalThis.leaked = 1; Promise.resolve().then(function () { Object.prototype.late = "LATE" });' +
        // The nunjucks runtime of this realm, through the (sloppy-mode) caller chain.
        ' var f = arguments.callee, found = false; try { while (f && !(f.arguments && f.arguments[3] && f.arguments[3].suppressValue)) f = f.caller; } catch (e) { f = null; }' +
        ' if (f) { f.arguments[3].suppressValue = function () { return "IBAN-EVIL" }; found = true; }' +
        ' return "patched:" + ({}).leak + ":" + found',
    );
    expect(attack.out).toMatch(/^patched:LEAKED:/);
    for (let i = 0; i < 3; i++) {
      const { out } = await run('return [({}).leak, ({}).late, "x".toUpperCase(), [1, 2].join("-"), typeof globalThis.leaked, JSON.parse("{\\"a\\":1}").a].join("|")');
      expect(out).toBe('||X|1-2|undefined|1');
    }
    // The data and the runtime of the next document are its own too.
    const { html } = await page.evaluate(
      { main: 'function root(env, context, frame, runtime, cb) { cb(null, "[" + runtime.suppressValue(runtime.contextOrFrameLookup(context, frame, "iban"), true) + "]"); }\nreturn { root: root };' },
      '{"iban":"IBAN-GOOD"}',
      { timeoutMs: 1_500, limitChars: 1 << 20, limitBytes: 1 << 20, signal: new AbortController().signal },
    );
    expect(html.main).toBe('[IBAN-GOOD]');
  });

  it.each([
    ['an endless loop', 'for (;;) {}'],
    ['an endless promise chain', 'Promise.resolve().then(function f() { return Promise.resolve().then(f); }); return "returned"'],
    ['an endless microtask loop without promises it returns', 'var p = Promise.resolve(); (function f() { p.then(f); })(); return "returned"'],
    ['a long synchronous job queued after the return', 'Promise.resolve().then(function () { for (;;) {} }); return "returned"'],
  ])('%s: TEMPLATE_TIMEOUT at the limit, and the next document renders on the same page', async (_name, body) => {
    const { error, ms } = await run(body, 1_000);
    expect(error?.code).toBe('TEMPLATE_TIMEOUT');
    expect(ms).toBeLessThan(4_000);
    expect(page.isLost).toBe(false);
    const next = await run('return "NEXT"');
    expect(next.out).toBe('NEXT');
  });

  it('a document exhausting memory fails as TEMPLATE_RENDER_ERROR; its page is replaced', async () => {
    const { error } = await run('var a = []; for (;;) a.push(new Array(1e7).fill(1.5));', 30_000);
    expect(error?.code).toBe('TEMPLATE_RENDER_ERROR');
    expect(page.isLost).toBe(true);
    expect((await run('return "AFTER-OOM"')).out).toBe('AFTER-OOM');
  });
});
