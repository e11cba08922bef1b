/**
 * Browser-side code of the template evaluator, as source text (it runs in Chromium, not here).
 *
 * Two parts:
 *  - the WORKER: nunjucks-slim (runtime only, no compiler) + Jinja2 compatibility + a one-shot
 *    message handler. It receives `{templates, data, limit}`, JSON.parses the data itself (so a
 *    `__proto__` key stays a plain own property), runs the precompiled code, checks the output size
 *    and posts one result. It is terminated right after, so whatever the template patched or
 *    scheduled dies with it.
 *  - the HARNESS in the evaluator page's main world: keeps one pre-started worker, hands each
 *    evaluation to it, enforces the time limit by terminating it, validates the one message it
 *    accepts, and starts the next worker.
 * Template code never runs in the harness's realm: the harness only reads cloned plain data.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

const WORKER_PRELUDE = String.raw`
;(function () {
  'use strict';
  var g = self;
  var nj = g.nunjucks;
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
  var post = g.postMessage.bind(g);
  var parse = JSON.parse;
  var keysOf = Object.keys;
  var makeFunction = Function;
  var toText = String;
  var isRangeError = function (e) { return e instanceof RangeError; };
  // Defence in depth only: the page's CSP (connect-src 'none'), request interception and the proxy
  // sinkhole already stop traffic; without these APIs a template does not even get to try.
  ['fetch', 'XMLHttpRequest', 'WebSocket', 'WebSocketStream', 'WebTransport', 'EventSource', 'importScripts',
    'Worker', 'SharedWorker', 'BroadcastChannel', 'indexedDB', 'caches', 'nunjucks'].forEach(function (name) {
    for (var o = g; o; o = Object.getPrototypeOf(o)) { try { delete o[name]; } catch (e) { /* not configurable */ } }
  });
  function describe(error, key) {
    try {
      var cause = error && error.cause ? error.cause : error;
      var message = toText(cause && cause.message !== undefined ? cause.message : cause);
      if (isRangeError(cause) && /Invalid (string|array) length/.test(message)) return { kind: 'too-large' };
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
  g.onmessage = function (event) {
    g.onmessage = null;
    var templates = event.data.templates, data = event.data.data, limit = event.data.limit;
    var out = {}, total = 0, key = '';
    try {
      var keys = keysOf(templates);
      for (var i = 0; i < keys.length; i++) {
        key = keys[i];
        var context = parse(data);
        var props = makeFunction(templates[key])();
        var html = new Template({ type: 'code', obj: props }, env, key, true).render(context);
        if (typeof html !== 'string') throw new Error('The template produced no text');
        total += html.length;
        if (total > limit) { post({ kind: 'too-large' }); return; }
        out[key] = html;
      }
      post({ kind: 'ok', out: out });
    } catch (error) {
      post(describe(error, key));
    }
  };
  post('ready');
})();
`;

const HARNESS = String.raw`
(function () {
  'use strict';
  var workerUrl = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
  var spare = null;
  function spawn() {
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
  globalThis.pressroomEvaluate = function (templates, data, timeoutMs, limit) {
    var started = performance.now();
    var current = spare || spawn();
    spare = null;
    var names = Object.keys(templates);
    return new Promise(function (resolve) {
      var done = false;
      function finish(result) {
        if (done) return;
        done = true;
        clearTimeout(timer);
        current.worker.onmessage = null;
        current.worker.terminate();
        refill();
        result.evalMs = performance.now() - started;
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
  };
  spare = spawn();
})();
`;

let cachedPage: string | undefined;

/** The evaluator page: harness plus the embedded worker source. Built once per process. */
export function evaluatorPageHtml(): string {
  if (cachedPage !== undefined) return cachedPage;
  const slim = readFileSync(require.resolve('nunjucks/browser/nunjucks-slim.min.js'), 'utf8')
    // A trailing `//# sourceMappingURL` comment would swallow the code appended after it.
    .replace(/\/\/# sourceMappingURL=\S*\s*$/, '');
  const workerSource = `${slim}\n${WORKER_PRELUDE}`;
  // `<` escaped so no `</script>` inside the source can end the inline script early.
  const literal = JSON.stringify(workerSource).replace(/</g, '\\u003c');
  cachedPage = `<!doctype html><html><head><meta charset="utf-8"><title>evaluator</title></head><body><script>var WORKER_SOURCE = ${literal};${HARNESS}</script></body></html>`;
  return cachedPage;
}

/**
 * Response headers of the evaluator page. `sandbox allow-scripts` gives it (and its workers) an
 * opaque origin: no storage, no cookies, nothing shared with the next evaluation; `connect-src`
 * falls back to `'none'`, so fetch/XHR/WebSocket/EventSource are refused before interception.
 */
export const EVALUATOR_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' blob:; worker-src blob:",
};
