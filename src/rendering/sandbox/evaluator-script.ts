/**
 * Browser-side code of the template evaluator, as source text (it runs in Chromium, not here).
 * `evaluator-page.ts` explains the design and why nothing survives from one document to the next.
 *
 * The evaluator page's main world holds the HARNESS. It evaluates each document in one of two ways,
 * chosen once when the page loads:
 *
 *  - REALM (Chromium launched with `--harmony-shadow-realm`): a fresh `ShadowRealm` per document.
 *    Into it, in this order: REALM_REDUCE (deletes everything from the realm's global that is not
 *    on REALM_GLOBALS and reports what could not be deleted), the nunjucks-slim runtime (runtime
 *    only, no compiler), then REALM_PRELUDE together with the document's precompiled templates,
 *    which yields a one-shot render function. The harness calls it with the data as a JSON string;
 *    it JSON.parses the data inside the realm (so a `__proto__` key stays a plain own property),
 *    renders main/header/footer, checks the output size and returns ONE string: the result as
 *    JSON. Only primitives and callables cross a ShadowRealm boundary, and the harness never hands
 *    a callable in, so realm code holds no reference to anything outside its realm. The harness
 *    validates the string with its own (untouched) intrinsics, drops the realm and answers only
 *    after a task boundary (MessageChannel), i.e. after every microtask the template queued has run.
 *  - WORKER (fallback, no ShadowRealm in this Chromium build): a pre-started dedicated Web Worker
 *    per document holding nunjucks-slim + WORKER_PRELUDE; it gets `{templates, data, limit}`,
 *    posts one result and is terminated; the harness enforces the time limit by terminating it.
 *
 * Template code never runs in the harness's realm: the harness only reads plain data it parsed or
 * cloned itself.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * What stays on a document realm's global: ECMAScript intrinsics that are synchronous and reach
 * nothing outside the realm, plus `atob`/`btoa` (pure string functions). Everything else the
 * realm's global starts with in Chromium is deleted before any template code runs, notably:
 * anything that can run code after the current task or reach outside — FinalizationRegistry
 * (cleanup callbacks), WeakRef, Atomics (`waitAsync`), WebAssembly (asynchronous compile),
 * AbortSignal/AbortController (`timeout()`), streams, Compression/DecompressionStream,
 * Observable/Subscriber, EventTarget and the event classes, queueMicrotask, reportError,
 * structuredClone, console, ShadowRealm itself, ShadowRealmGlobalScope — and what templates do not
 * need: Temporal, URL/URLPattern/URLSearchParams, TextEncoder/TextDecoder (+ streams),
 * DOMException, QuotaExceededError, isSecureContext, and `eval` (a string-to-code entry point
 * nunjucks does not use). `Function` stays, but as a function that throws (REALM_REDUCE).
 */
export const REALM_GLOBALS: readonly string[] = [
  'globalThis', 'Infinity', 'NaN', 'undefined',
  'Object', 'Function', 'Array', 'Number', 'Boolean', 'String', 'Symbol', 'BigInt', 'Date', 'RegExp', 'Promise',
  'Error', 'AggregateError', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError', 'TypeError', 'URIError', 'SuppressedError',
  'JSON', 'Math', 'Intl', 'Reflect', 'Proxy', 'Iterator', 'Map', 'Set', 'WeakMap', 'WeakSet', 'DisposableStack', 'AsyncDisposableStack',
  'ArrayBuffer', 'DataView', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
  'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array',
  'parseFloat', 'parseInt', 'isFinite', 'isNaN', 'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape',
  'atob', 'btoa',
];

/**
 * First script evaluated in every document realm. Deletes every own property of the realm's global
 * that is not allowed, and every own property of the objects on the global's prototype chain up to
 * Object.prototype (in Chromium: ShadowRealmGlobalScope.prototype, whose `constructor` is the
 * interface object), and disables the function constructors (`Function`, and the `constructor` of
 * Function.prototype and of the async/generator function prototypes). Returns '' when the realm
 * is in that state, else what is left.
 */
const REALM_REDUCE = String.raw`
(function () {
  'use strict';
  var allowed = Object.create(null);
  ALLOWED_NAMES.forEach(function (name) { allowed[name] = true; });
  var g = globalThis, ownKeys = Reflect.ownKeys, getProto = Object.getPrototypeOf, objectProto = Object.prototype;
  function strip(o, keep) {
    ownKeys(o).forEach(function (key) {
      if (keep && typeof key === 'string' && allowed[key]) return;
      try { delete o[key]; } catch (e) { /* reported below */ }
    });
  }
  strip(g, true);
  for (var p = getProto(g); p && p !== objectProto; p = getProto(p)) strip(p, false);
  // The function constructors: Chromium refuses them inside a ShadowRealm, but with a TypeError
  // created in the page's main world, whose .constructor.constructor is the main world's Function.
  // Replace every way to reach them with a function of this realm that throws this realm's error.
  var disabled = function () { throw new TypeError('Templates cannot create code from strings'); };
  var kinds = [function () {}, async function () {}, function* () {}, async function* () {}].map(getProto);
  kinds.forEach(function (proto) { Object.defineProperty(proto, 'constructor', { value: disabled, writable: false, enumerable: false, configurable: false }); });
  Object.defineProperty(disabled, 'prototype', { value: Function.prototype, writable: false, enumerable: false, configurable: false });
  Object.defineProperty(g, 'Function', { value: disabled, writable: true, enumerable: false, configurable: true });
  var left = ownKeys(g).filter(function (key) { return typeof key !== 'string' || !allowed[key]; }).map(String);
  for (var q = getProto(g); q && q !== objectProto; q = getProto(q)) left = left.concat(ownKeys(q).map(function (k) { return 'prototype.' + String(k); }));
  if (getProto(g) === null || !objectProto.isPrototypeOf(g)) left.push('(prototype chain)');
  kinds.forEach(function (proto, i) { if (proto.constructor !== disabled) left.push('(function constructor ' + i + ')'); });
  return left.join(',');
})()
`.replace('ALLOWED_NAMES', JSON.stringify(REALM_GLOBALS));

/**
 * Shared by both evaluators: Jinja2 compatibility, the `__proto__`-safe context copy, the
 * environment, intrinsics captured before template code runs, and the error description.
 * Expects `g` (the global) and `nj` (nunjucks) in scope.
 */
const COMMON_PRELUDE = String.raw`
  nj.installJinjaCompat();
  // Nunjucks copies the data into its context with \`target[key] = value\`; for a \`__proto__\` key
  // (which JSON.parse keeps as an own property) that would set the context's prototype and let the
  // data define every name the template looks up. Copy such keys as own properties instead.
  var defineOwn = Object.defineProperty;
  nj.lib.extend = nj.lib._assign = function (target, source) {
    target = target || {};
    Object.keys(source || {}).forEach(function (key) {
      if (key === '__proto__') defineOwn(target, key, { value: source[key], enumerable: true, writable: true, configurable: true });
      else target[key] = source[key];
    });
    return target;
  };
  // dev: true keeps lineno/colno on runtime errors instead of folding them into the message.
  var env = new nj.Environment([], { autoescape: true, throwOnUndefined: false, dev: true });
  // Captured before any template code runs, which may replace globals.
  var Template = nj.Template;
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var keysOf = Object.keys;
  var toText = String;
  var isRangeError = function (e) { return e instanceof RangeError; };
  function describe(error, key) {
    try {
      var cause = error && error.cause ? error.cause : error;
      var message = toText(cause && cause.message !== undefined ? cause.message : cause);
      // A string past V8's limit is output too large; an array past it is a list built too long
      // (a huge range(): nunjucks builds the whole list first), not output.
      if (isRangeError(cause) && /Invalid string length/.test(message)) return { kind: 'too-large' };
      if (isRangeError(cause) && /Invalid (typed )?array length/.test(message)) message = 'A list grew too long (a huge range()?)';
      if (isRangeError(cause) && /call stack/.test(message)) message = 'Maximum call stack size exceeded (a macro calling itself without end?)';
      var result = { kind: 'error', template: key, message: message.split('\n')[0].slice(0, 300) };
      // Compiled code reports 0-based positions.
      if (typeof error.lineno === 'number') result.line = error.lineno + 1;
      if (typeof error.colno === 'number') result.column = error.colno + 1;
      return result;
    } catch (e) {
      return { kind: 'error', template: key, message: 'The template failed' };
    }
  }
  // Renders every part; returns the result object (never throws).
  function renderParts(templates, load, data, limit) {
    var out = {}, total = 0, key = '';
    try {
      var keys = keysOf(templates);
      for (var i = 0; i < keys.length; i++) {
        key = keys[i];
        var context = parse(data);
        var props = load(templates[key]);
        var html = new Template({ type: 'code', obj: props }, env, key, true).render(context);
        if (typeof html !== 'string') throw new Error('The template produced no text');
        total += html.length;
        if (total > limit) return { kind: 'too-large' };
        out[key] = html;
      }
      return { kind: 'ok', out: out };
    } catch (error) {
      return describe(error, key);
    }
  }
`;

/**
 * Evaluated in a document realm after nunjucks, followed by that document's templates as
 * `{"main": function () { <compiled code> }, …})` (appended by the harness). Its completion value
 * is the one-shot render function `(dataJson, limit) → resultJson` the harness receives (wrapped).
 */
const REALM_PRELUDE = String.raw`
(function (templates) {
  'use strict';
  var g = globalThis;
  var nj = g.nunjucks;
  delete g.nunjucks;
  ${COMMON_PRELUDE}
  var used = false;
  return function render(data, limit) {
    if (used) return '{"kind":"error","message":"render called twice"}';
    used = true;
    return stringify(renderParts(templates, function (part) { return part(); }, data, limit));
  };
})(`;

const WORKER_PRELUDE = String.raw`
;(function () {
  'use strict';
  var g = self;
  var nj = g.nunjucks;
  ${COMMON_PRELUDE}
  var post = g.postMessage.bind(g);
  var makeFunction = Function;
  // Defence in depth only: the page's CSP (connect-src 'none'), request interception and the proxy
  // sinkhole already stop traffic; without these APIs a template does not even get to try.
  ['fetch', 'XMLHttpRequest', 'WebSocket', 'WebSocketStream', 'WebTransport', 'EventSource', 'importScripts',
    'Worker', 'SharedWorker', 'BroadcastChannel', 'indexedDB', 'caches', 'nunjucks'].forEach(function (name) {
    for (var o = g; o; o = Object.getPrototypeOf(o)) { try { delete o[name]; } catch (e) { /* not configurable */ } }
  });
  g.onmessage = function (event) {
    g.onmessage = null;
    var msg = event.data;
    post(renderParts(msg.templates, function (code) { return makeFunction(code)(); }, msg.data, msg.limit));
  };
  post('ready');
})();
`;

const HARNESS = String.raw`
(function () {
  'use strict';
  // Intrinsics of this (the harness's) realm; template code never runs here, captured anyway.
  var parseJson = JSON.parse, keysOf = Object.keys, now = performance.now.bind(performance);
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : undefined; }
  function check(msg, names, limit) {
    if (!msg || typeof msg !== 'object') return { kind: 'error', message: 'The template produced no result' };
    if (msg.kind === 'too-large') return { kind: 'too-large' };
    if (msg.kind === 'error') {
      return { kind: 'error', message: String(msg.message).slice(0, 300), template: String(msg.template || ''), line: num(msg.line), column: num(msg.column) };
    }
    if (msg.kind !== 'ok' || !msg.out || typeof msg.out !== 'object') return { kind: 'error', message: 'The template produced no result' };
    var out = {}, total = 0;
    for (var i = 0; i < names.length; i++) {
      var html = msg.out[names[i]];
      if (typeof html !== 'string') return { kind: 'error', message: 'The template produced no result' };
      total += html.length;
      if (total > limit) return { kind: 'too-large' };
      out[names[i]] = html;
    }
    return { kind: 'ok', out: out };
  }
  /** Resolves with value after a task boundary: only once every queued microtask has run. */
  function afterTask(value) {
    return new Promise(function (resolve) {
      var channel = new MessageChannel();
      channel.port1.onmessage = function () { channel.port1.close(); resolve(value); };
      channel.port2.postMessage(null);
    });
  }

  // ---- ShadowRealm evaluator -------------------------------------------------------------------
  /** Evaluates one document in a fresh, reduced realm; returns the harness result (sync). */
  function evaluateInRealm(templates, data, limit) {
    var names = keysOf(templates);
    var realm = new ShadowRealm();
    var left = realm.evaluate(REALM_REDUCE);
    if (left !== '') return { kind: 'failed', message: 'The template realm keeps globals it must not: ' + String(left).slice(0, 200) };
    realm.evaluate(NUNJUCKS_SOURCE);
    var parts = names.map(function (name) { return JSON.stringify(name) + ': function () {\n' + templates[name] + '\n}'; });
    var render;
    try {
      render = realm.evaluate(REALM_PRELUDE + '{' + parts.join(',\n') + '})');
    } catch (e) {
      // Not valid code: only possible for code our compiler did not produce.
      return { kind: 'error', message: 'The compiled template is not valid: ' + String(e && e.message || e).slice(0, 200) };
    }
    if (typeof render !== 'function') return { kind: 'error', message: 'The compiled template is not valid' };
    var text;
    try {
      text = render(data, limit);
    } catch (e) {
      // The realm's own catch failed too (e.g. the template broke the intrinsics it uses).
      return { kind: 'error', message: String(e && e.message || 'The template failed').replace(/^ShadowRealm evaluate threw \((.*)\)$/, '$1').slice(0, 300) };
    }
    // JSON escaping can at most sextuple a string (\uXXXX); anything longer is over the limit.
    if (typeof text !== 'string') return { kind: 'error', message: 'The template produced no result' };
    if (text.length > limit * 6 + 4096) return { kind: 'too-large' };
    var msg;
    try { msg = parseJson(text); } catch (e) { return { kind: 'error', message: 'The template produced no result' }; }
    return check(msg, names, limit);
  }

  /** Checks once that this Chromium can evaluate a template in a reduced realm. */
  function probeRealm() {
    if (typeof ShadowRealm !== 'function') return 'ShadowRealm is not available (Chromium without --js-flags=--harmony-shadow-realm?)';
    try {
      var code = 'function root(env, context, frame, runtime, cb) { cb(null, "ok " + runtime.suppressValue(runtime.contextOrFrameLookup(context, frame, "x"), env.opts.autoescape)); }\nreturn { root: root };';
      var result = evaluateInRealm({ main: code }, '{"x":"<&>"}', 1000);
      if (result.kind === 'ok' && result.out.main === 'ok &lt;&amp;&gt;') return '';
      return 'a probe template did not evaluate in a ShadowRealm: ' + JSON.stringify(result).slice(0, 300);
    } catch (e) {
      return 'a probe template did not evaluate in a ShadowRealm: ' + String(e && e.message || e).slice(0, 300);
    }
  }

  // ---- Web Worker evaluator (fallback) ---------------------------------------------------------
  var workerUrl = null;
  var spare = null;
  function spawn() {
    workerUrl = workerUrl || URL.createObjectURL(new Blob([NUNJUCKS_SOURCE + '\n' + WORKER_PRELUDE], { type: 'text/javascript' }));
    var worker = new Worker(workerUrl, { name: 'template' });
    var ready = new Promise(function (resolve) {
      worker.onmessage = function (e) { resolve(e.data === 'ready'); };
      worker.onerror = function (e) { e.preventDefault(); resolve(false); };
    });
    return { worker: worker, ready: ready };
  }
  function refill() {
    // After the current result is handed back, so the spare's start-up does not delay it.
    setTimeout(function () { if (!spare) spare = spawn(); }, 0);
  }
  function evaluateInWorker(templates, data, timeoutMs, limit) {
    var started = now();
    var current = spare || spawn();
    spare = null;
    var names = keysOf(templates);
    return new Promise(function (resolve) {
      var done = false;
      function finish(result) {
        if (done) return;
        done = true;
        clearTimeout(timer);
        current.worker.onmessage = null;
        current.worker.terminate();
        refill();
        result.evalMs = now() - started;
        resolve(result);
      }
      var timer = setTimeout(function () { finish({ kind: 'timeout' }); }, timeoutMs);
      current.ready.then(function (ok) {
        if (done) return;
        if (!ok) return finish({ kind: 'failed', message: 'The template sandbox did not start' });
        current.worker.onmessage = function (e) { finish(check(e.data, names, limit)); };
        current.worker.onerror = function (e) {
          e.preventDefault();
          finish({ kind: 'error', message: String(e.message || 'The template failed').slice(0, 300) });
        };
        current.worker.postMessage({ templates: templates, data: data, limit: limit });
      });
    });
  }

  // ---- Entry points (called by Node over CDP) ---------------------------------------------------
  // Node asks for the worker evaluator with a #worker fragment (never sent over the wire), so it is
  // used even by a Chromium that ships ShadowRealm.
  var fallbackReason = location.hash === '#worker' ? 'the worker evaluator was asked for' : probeRealm();
  globalThis.pressroomEvaluator = { mode: fallbackReason === '' ? 'realm' : 'worker', reason: fallbackReason };
  if (fallbackReason !== '') spare = spawn();
  globalThis.pressroomEvaluate = function (templates, data, timeoutMs, limit) {
    if (fallbackReason !== '') return evaluateInWorker(templates, data, timeoutMs, limit);
    var started = now();
    var result;
    try {
      result = evaluateInRealm(templates, data, limit);
    } catch (e) {
      result = { kind: 'failed', message: 'The template realm failed: ' + String(e && e.message || e).slice(0, 200) };
    }
    result.evalMs = now() - started;
    return afterTask(result);
  };
})();
`;

let cachedPage: string | undefined;

/** The evaluator page: harness plus the embedded nunjucks runtime and realm/worker code. Built once per process. */
export function evaluatorPageHtml(): string {
  if (cachedPage !== undefined) return cachedPage;
  const slim = readFileSync(require.resolve('nunjucks/browser/nunjucks-slim.min.js'), 'utf8')
    // A trailing `//# sourceMappingURL` comment would swallow the code appended after it.
    .replace(/\/\/# sourceMappingURL=\S*\s*$/, '');
  // `<` escaped so no `</script>` inside the sources can end the inline script early.
  const literal = (source: string) => JSON.stringify(source).replace(/</g, '\\u003c');
  const constants = [
    `var NUNJUCKS_SOURCE = ${literal(slim)};`,
    `var REALM_REDUCE = ${literal(REALM_REDUCE)};`,
    `var REALM_PRELUDE = ${literal(REALM_PRELUDE)};`,
    `var WORKER_PRELUDE = ${literal(WORKER_PRELUDE)};`,
  ].join('\n');
  cachedPage = `<!doctype html><html><head><meta charset="utf-8"><title>evaluator</title></head><body><script>${constants}\n${HARNESS}</script></body></html>`;
  return cachedPage;
}

/**
 * Response headers of the evaluator page. `sandbox allow-scripts` gives it (and its workers) an
 * opaque origin: no storage, no cookies, nothing shared with the next evaluation; `connect-src`
 * falls back to `'none'`, so fetch/XHR/WebSocket/EventSource are refused before interception.
 * `'unsafe-eval'` lets the harness evaluate code in its realms (and the fallback's workers build
 * functions); `blob:` is for the fallback's worker script.
 */
export const EVALUATOR_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' blob:; worker-src blob:",
};
