/**
 * Browser-side code of the template evaluator, as source text (it runs in Chromium, not here).
 * `evaluator-page.ts` explains the design and why nothing survives from one document to the next.
 *
 * The evaluator page's main world holds the HARNESS, which Node calls once per document. Node opens
 * the page built for one of two evaluators (each page carries only the code its evaluator needs):
 *
 *  - COMPARTMENT (the default): the page hardens its own JavaScript with SES
 *    `lockdown()` before anything else runs (every shared intrinsic — Object.prototype,
 *    Array.prototype, JSON, Promise, Function.prototype, … — frozen and tamed), then evaluates each
 *    document in a FRESH SES `Compartment` on its main thread: a new global object holding nothing
 *    but the frozen intrinsics, its own `Function`/`eval` bound to that global, its own copy of
 *    nunjucks-slim (evaluated in it), the document's precompiled templates and the data as a JSON
 *    string. The compartment returns ONE string (the result as JSON) and is dropped. The harness
 *    answers only after a task boundary, so every promise job the document queued has run by then.
 *    Node enforces the time limit: it stops the page's JavaScript (`Runtime.terminateExecution`)
 *    and replaces the page.
 *  - WORKER: a fresh dedicated Web Worker per document holding nunjucks-slim +
 *    WORKER_PRELUDE (pre-started as a spare); it gets `{templates, data, limit}`, posts one result and
 *    is terminated; the harness terminates it at the time limit. Stronger separation (a new V8
 *    isolate per document), ~13 ms more CPU per document.
 *
 * Template code never runs with the harness's global: the harness only reads strings and plain
 * data it parsed or cloned itself.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { EvaluatorKind } from './evaluator-page.js';

const require = createRequire(import.meta.url);

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
  // Jinja2's printf-style format filter, which nunjucks lacks: "%.2f"|format(x),
  // "%s and %s"|format(a, b), "%(n)d items"|format(n=3); flags - + space 0, width, precision.
  var FORMAT_SPEC = /%(?:\(([^)]*)\))?([-+ 0]*)(\d*)(?:\.(\d+))?([sdifFeExXoc%])/g;
  var ownKey = Object.prototype.hasOwnProperty;
  env.addFilter('format', function (fmt) {
    var args = Array.prototype.slice.call(arguments, 1), next = 0, named = null;
    var last = args[args.length - 1];
    if (last && typeof last === 'object' && last.__keywords) { named = last; args = args.slice(0, -1); }
    return String(fmt).replace(FORMAT_SPEC, function (all, key, flags, width, precision, conv) {
      if (conv === '%') return '%';
      var value = key !== undefined ? (named && ownKey.call(named, key) ? named[key] : undefined) : args[next++];
      var text, number = Number(value), isNumber = 'sc'.indexOf(conv) < 0;
      var digits = precision === undefined ? 6 : Number(precision);
      if (conv === 's') text = precision === undefined ? String(value) : String(value).slice(0, digits);
      else if (conv === 'c') text = typeof value === 'number' ? String.fromCharCode(value) : String(value);
      else if (conv === 'd' || conv === 'i') text = String(Math.abs(Math.trunc(number)));
      else if (conv === 'f' || conv === 'F') text = Math.abs(number).toFixed(digits);
      else if (conv === 'e' || conv === 'E') text = Math.abs(number).toExponential(digits).replace(/e([+-])(\d)$/, 'e$10$2');
      else text = Math.abs(Math.trunc(number)).toString(conv === 'o' ? 8 : 16);
      if (conv === 'X' || conv === 'E' || conv === 'F') text = text.toUpperCase();
      if (isNumber) text = (number < 0 ? '-' : flags.indexOf('+') >= 0 ? '+' : flags.indexOf(' ') >= 0 ? ' ' : '') + text;
      var pad = Number(width || 0) - text.length;
      if (pad <= 0) return text;
      if (flags.indexOf('-') >= 0) return text + ' '.repeat(pad);
      if (isNumber && flags.indexOf('0') >= 0 && isFinite(number)) return text.replace(/^([-+ ]?)/, '$1' + '0'.repeat(pad));
      return ' '.repeat(pad) + text;
    });
  });
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
 * Evaluated in a document's compartment, followed by the nunjucks-slim expression and that
 * document's templates as `, {"main": function () { <compiled code> }, …})` (appended by the
 * harness). Its completion value is the one-shot render function `(dataJson, limit) → resultJson`.
 */
const COMPARTMENT_DOCUMENT = String.raw`
(function (nj, templates) {
  'use strict';
  var g = globalThis;
  ${COMMON_PRELUDE}
  var used = false;
  return function render(data, limit) {
    if (used) return '{"kind":"error","message":"render called twice"}';
    used = true;
    return stringify(renderParts(templates, function (part) { return part(); }, data, limit));
  };
})(`;

/**
 * First code of the compartment page, right after the SES bundle: `lockdown()` before any other
 * code runs, then the network and worker APIs are removed from the page's global.
 */
const LOCKDOWN = String.raw`
;(function () {
  'use strict';
  // overrideTaming 'severe': every Object.prototype property becomes assignable ON ITS OWN OBJECTS
  // (an accessor that defines an own property on the receiver; the prototype itself stays
  // frozen), so data and templates may use keys such as "constructor" or "toString" — which
  // nunjucks copies into its context by assignment — without the "override mistake".
  lockdown({ errorTaming: 'safe', overrideTaming: 'severe', consoleTaming: 'safe', stackFiltering: 'concise' });
  // Not reachable from a compartment anyway (its global is its own); removed as defence in depth.
  ['fetch', 'XMLHttpRequest', 'WebSocket', 'WebSocketStream', 'WebTransport', 'EventSource',
    'Worker', 'SharedWorker', 'BroadcastChannel', 'indexedDB', 'caches', 'open'].forEach(function (name) {
    for (var o = globalThis; o; o = Object.getPrototypeOf(o)) { try { delete o[name]; } catch (e) { /* not configurable */ } }
  });
})();
`;

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
  // ---- Compartment evaluator (default): a fresh Compartment per document, on this thread -------
  // Captured at start; lockdown() has frozen them, so no document can have replaced them.
  var NewCompartment = typeof Compartment === 'function' ? Compartment : null;
  var NewChannel = MessageChannel, toText = String, stringify = JSON.stringify;
  function evaluateInCompartment(templates, data, timeoutMs, limit) {
    var started = now();
    var names = keysOf(templates);
    var parts = names.map(function (name) { return stringify(name) + ': function () {\n' + templates[name] + '\n}'; }).join(',\n');
    var text;
    try {
      var compartment = new NewCompartment({ __options__: true, globals: {} });
      var render = compartment.evaluate(COMPARTMENT_DOCUMENT + NUNJUCKS_EXPRESSION + ', {' + parts + '})');
      text = typeof render === 'function' ? render(data, limit) : null;
    } catch (e) {
      // SES refused the code (it is not code our compiler produces), or the document broke its own copy.
      var message = 'The template failed';
      try { message = toText(e && e.message !== undefined ? e.message : e); } catch (e2) { /* keep the default */ }
      text = stringify({ kind: 'error', message: message.split('\n')[0].slice(0, 300) });
    }
    function readAnswer() {
      // JSON escaping can at most sextuple a string (\uXXXX); anything longer is over the limit.
      if (typeof text !== 'string') return { kind: 'error', message: 'The template produced no result' };
      if (text.length > limit * 6 + 4096) return { kind: 'too-large' };
      try { return check(parseJson(text), names, limit); } catch (err) { return { kind: 'error', message: 'The template produced no result' }; }
    }
    // Answer after a task boundary: every promise job the document queued runs first (an endless
    // chain of them holds the answer back until Node stops the page at the time limit).
    return new Promise(function (resolve) {
      var channel = new NewChannel();
      channel.port1.onmessage = function () {
        channel.port1.close();
        var result = readAnswer();
        result.evalMs = now() - started;
        resolve(result);
      };
      channel.port2.postMessage(null);
    });
  }

  // ---- Worker evaluator: a fresh Web Worker per document -----------------------------------------
  var scriptUrls = {};
  function startWorker(source, name) {
    // One blob URL per script for the page's lifetime, not one per worker.
    var url = scriptUrls[name] || (scriptUrls[name] = URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));
    var worker = new Worker(url, { name: name });
    var ready = new Promise(function (resolve) {
      worker.onmessage = function (e) { resolve(e.data === 'ready'); };
      worker.onerror = function (e) { e.preventDefault(); resolve(false); };
    });
    return { worker: worker, ready: ready };
  }
  /**
   * Sends message to the worker and resolves with the harness result: check() of its answer, a
   * timeout at timeoutMs, an error if it throws; then release() ends the worker.
   */
  function runDocument(current, message, timeoutMs, names, limit, release) {
    var started = now();
    return new Promise(function (resolve) {
      var done = false;
      function finish(result) {
        if (done) return;
        done = true;
        clearTimeout(timer);
        current.worker.onmessage = null;
        current.worker.onerror = null;
        release();
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
        current.worker.postMessage(message);
      });
    });
  }
  /** Starts the next worker after the current result is handed back, so its start-up does not delay it. */
  function later(fn) { setTimeout(fn, 0); }

  var spare = null;
  function startFreshWorker() { return startWorker(NUNJUCKS_SOURCE + '\n' + WORKER_PRELUDE, 'template'); }
  function evaluateInWorker(templates, data, timeoutMs, limit) {
    var current = spare || startFreshWorker();
    spare = null;
    return runDocument(current, { templates: templates, data: data, limit: limit }, timeoutMs, keysOf(templates), limit, function () {
      current.worker.terminate();
      later(function () { if (!spare) spare = startFreshWorker(); });
    });
  }

  // ---- Compiled templates kept between documents -------------------------------------------------
  // Node sends a template's code once and then only its id. This list (id → code, least recently
  // used first) takes the same steps in the same order as Node's (SentTemplates in
  // evaluator-page.ts), so both agree on what is held; id 0 is never kept. Only this harness reads
  // it: documents get the code as a string, never the list.
  var held = new Map();
  function heldTemplates(sent, ids) {
    var names = keysOf(sent), templates = {};
    for (var i = 0; i < names.length; i++) {
      var name = names[i], id = ids[name], code = sent[name];
      if (typeof code === 'string') {
        if (id > 0) {
          held.set(id, code);
          if (held.size > TEMPLATE_CACHE_SIZE) held.delete(held.keys().next().value);
        }
      } else {
        code = held.get(id);
        if (typeof code !== 'string') { held.clear(); return null; }
        held.delete(id);
        held.set(id, code);
      }
      templates[name] = code;
    }
    return templates;
  }

  // ---- Entry points (called by Node over CDP) ---------------------------------------------------
  // MODE is written into the page by evaluatorPageHtml().
  var mode = MODE;
  globalThis.pressroomEvaluator = { mode: mode };
  if (mode === 'worker') spare = startFreshWorker();
  else if (!NewCompartment) globalThis.pressroomEvaluator = { mode: 'failed' };
  var evaluate = mode === 'worker' ? evaluateInWorker : evaluateInCompartment;
  globalThis.pressroomEvaluate = function (sent, ids, data, timeoutMs, limit) {
    var templates = heldTemplates(sent, ids);
    return templates ? evaluate(templates, data, timeoutMs, limit) : { kind: 'miss' };
  };
})();
`;

/** Compiled templates each evaluator page keeps (see SentTemplates in `evaluator-page.ts`). */
export const PAGE_TEMPLATE_CACHE_SIZE = 32;

/**
 * nunjucks-slim 3.2.4 made fit for a locked-down realm, as an expression whose value is the nunjucks
 * object (no global is written):
 *  - SafeString's `valueOf`/`toString` are assigned onto an object inheriting from String.prototype;
 *    once that is frozen, assignment fails ("override mistake"), so they are defined instead.
 *  - SES refuses any source containing an HTML comment token (`striptags` has one in a regular
 *    expression); `\u0021` and `\u002d` mean the same characters there.
 * Each patch must apply: a different nunjucks build fails here, loudly, not in a template.
 */
function nunjucksForCompartments(slim: string): string {
  const patches: [string, string][] = [
    [
      's.prototype.valueOf=function(){return this.val},s.prototype.toString=function(){return this.val}',
      'Object.defineProperties(s.prototype,{valueOf:{value:function(){return this.val},writable:!0,configurable:!0},toString:{value:function(){return this.val},writable:!0,configurable:!0}})',
    ],
    ['<!--[\\s\\S]*?-->', '<\\u0021--[\\s\\S]*?-\\u002d>'],
  ];
  let patched = slim;
  for (const [from, to] of patches) {
    if (!patched.includes(from)) throw new Error(`nunjucks-slim is not the build the evaluator was written for (missing: ${from.slice(0, 40)})`);
    patched = patched.replace(from, to);
  }
  if (/<!--|-->/.test(patched)) throw new Error('nunjucks-slim still holds an HTML comment token');
  return `(function (module, exports) {\n${patched}\n;return module.exports;\n})({ exports: {} }, {})`;
}

const cachedPages = new Map<EvaluatorKind, string>();

/**
 * The evaluator page for one evaluator, built once per process: `compartment` gets SES, lockdown
 * and the nunjucks expression for compartments; `worker` gets nunjucks-slim and the worker prelude.
 */
export function evaluatorPageHtml(kind: EvaluatorKind): string {
  const cached = cachedPages.get(kind);
  if (cached !== undefined) return cached;
  const slim = readFileSync(require.resolve('nunjucks/browser/nunjucks-slim.min.js'), 'utf8')
    // A trailing `//# sourceMappingURL` comment would swallow the code appended after it.
    .replace(/\/\/# sourceMappingURL=\S*\s*$/, '');
  // `<` escaped so no `</script>` inside the sources can end the inline script early.
  const literal = (source: string) => JSON.stringify(source).replace(/</g, '\\u003c');
  const script: string[] = [];
  if (kind === 'compartment') {
    const ses = readFileSync(join(dirname(require.resolve('ses')), 'ses.umd.min.js'), 'utf8').replace(/\/\/# sourceMappingURL=\S*\s*$/, '');
    // The SES bundle goes in as code, ahead of everything (lockdown must run first); it must hold
    // nothing that would end or confuse the inline script.
    if (/<\/script|<!--/i.test(ses)) throw new Error('the SES bundle cannot be inlined in the evaluator page');
    script.push(ses, LOCKDOWN, `var COMPARTMENT_DOCUMENT = ${literal(COMPARTMENT_DOCUMENT)};`, `var NUNJUCKS_EXPRESSION = ${literal(nunjucksForCompartments(slim))};`);
  } else {
    script.push(`var NUNJUCKS_SOURCE = ${literal(slim)};`, `var WORKER_PRELUDE = ${literal(WORKER_PRELUDE)};`);
  }
  script.push(`var MODE = ${JSON.stringify(kind)};`, `var TEMPLATE_CACHE_SIZE = ${PAGE_TEMPLATE_CACHE_SIZE};`, HARNESS);
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>evaluator</title></head><body><script>${script.join('\n')}</script></body></html>`;
  cachedPages.set(kind, page);
  return page;
}

/**
 * Response headers of the evaluator page. `sandbox allow-scripts` gives it (and its workers) an
 * opaque origin: no storage, no cookies, nothing shared with the next evaluation; `connect-src`
 * falls back to `'none'`, so fetch/XHR/WebSocket/EventSource are refused before interception.
 * `'unsafe-eval'` lets the workers build functions and compartments evaluate code; `blob:` is for
 * the worker scripts.
 */
export const EVALUATOR_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' blob:; worker-src blob:",
};
