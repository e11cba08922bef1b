/**
 * Node side of the template evaluator: one Chromium page per pool slot, at an opaque-origin
 * sandboxed URL (CSP `sandbox allow-scripts`, `connect-src 'none'`, behind the closed room), whose
 * harness (`evaluator-script.ts`) evaluates each document in a FRESH SHADOWREALM. One CDP round
 * trip per evaluation.
 *
 * Why nothing survives from one document to the next (by construction, not by cleaning up):
 *   1. A realm is created for one document and never reused. It has its own intrinsics (Object,
 *      Array.prototype, String.prototype, …) and its own copy of nunjucks, so patching a prototype
 *      or the nunjucks runtime changes only that document's realm.
 *   2. Nothing in a realm references anything outside it: only primitives and callables cross a
 *      ShadowRealm boundary (callables as wrappers), the data goes in as a JSON string, the result
 *      comes out as a JSON string, and the harness never passes a callable in.
 *   3. Before any template code runs, the realm's global is reduced to an allowlist of synchronous
 *      ECMAScript intrinsics (`REALM_GLOBALS`): no timers, no events or observers, no
 *      AbortSignal.timeout, no FinalizationRegistry/WeakRef, no Atomics.waitAsync, no WebAssembly,
 *      no streams, no queueMicrotask, no console, no nested ShadowRealm. (The reduction is verified
 *      in the realm; a realm that keeps anything else is not used.) So realm code can run only
 *      (a) synchronously inside the harness's call into the realm, or (b) as promise jobs it
 *      queued, which are microtasks: they run at the microtask checkpoint at the end of that same
 *      task, before any other task of the page. The harness answers after a task boundary
 *      (MessageChannel), so when Node gets the result every job the template queued has run — an
 *      endless `then` chain keeps the checkpoint from ending and is cut off by the deadline below,
 *      as that document's TEMPLATE_TIMEOUT.
 *   4. After the answer no task can call into the realm (nothing registered a callback) and the
 *      harness has dropped its references, so the realm's code can never run again; the realm is
 *      unreachable and collected. The next document starts in a realm with fresh intrinsics.
 *   One way out of (3) that cannot be deleted is syntax: `import()`. In Chromium 156 a dynamic
 *   import inside a ShadowRealm crashes the renderer (measured), and it would otherwise complete in
 *   a later task. Template code cannot produce it: Chromium refuses to construct functions from
 *   strings inside a ShadowRealm (`Function(…)` throws "no access", indirect eval runs nothing;
 *   measured, and relied on only as defence in depth), nunjucks output has no such syntax, and
 *   `import` is rewritten to `\u0069mport` in the compiled code before it is sent (the same
 *   identifier or string in every valid place, a syntax error as a keyword), so not even compiled
 *   code that our compiler did not mean to produce can contain it.
 *
 * Limits:
 *   - output size: checked in the realm before serialising, again by the harness and again here;
 *   - time: evaluation runs on the page's main thread, so a runaway template blocks it. At
 *     `templateTimeoutMs` (or when the render is aborted) we call CDP `Runtime.terminateExecution`
 *     on the page — it interrupts the running script or microtask loop (V8 drops the queued
 *     microtasks) — then check that the page answers a trivial call, through a task boundary,
 *     within RECOVER_MS; if it does not, the page is given up and the pool opens a new one. The
 *     render fails with TEMPLATE_TIMEOUT either way.
 *   - memory: the per-isolate V8 heap cap (`launch-chromium.ts`); a template that exhausts it
 *     crashes the evaluator renderer: that render fails with TEMPLATE_RENDER_ERROR and the pool
 *     replaces the page.
 *
 * Cost, measured on the 2-core benchmark VM under load: creating the realm, reducing its global,
 * loading nunjucks-slim and rendering the invoice ≈ 3–5 ms of CPU, against ~18–30 ms for the fresh
 * dedicated Web Worker per document this replaced.
 *
 * KNOWN PROBLEM: in Chromium 156 the evaluator renderer crashes, deterministically, at the 12th
 * evaluation in a row of the peers' report fixture (283 KB data, 560 KB HTML) on one page — a valid
 * document then fails as TEMPLATE_RENDER_ERROR ("too much memory", with a ~20 MB heap). Not seen
 * with a forced full GC after each document. Unresolved; see README ("Evaluate").
 *
 * FALLBACK: ShadowRealm is behind a V8 flag in Chromium 156. The harness checks once per page that
 * it can evaluate a probe template in a reduced realm; if not (another build, the flag missing),
 * the page evaluates each document in a fresh dedicated Web Worker instead (nunjucks-slim
 * pre-loaded in a spare worker, terminated after one document, the harness terminates it at the
 * time limit; Node gives the page up if it stops answering a little later), and a warning is
 * logged once per process.
 */
import type { CDPSession } from 'puppeteer-core';
import { AppError, type ErrorDetails } from '../../shared/errors.js';
import type { Logger } from '../../shared/log.js';
import { raceSignal, timeoutSignal } from '../chromium/cdp-helpers.js';
import { ClosedRoom, EVALUATOR_ORIGIN, type ClosedRoomOptions } from '../chromium/closed-room.js';
import { PageTarget } from '../chromium/page-target.js';
import { EVALUATOR_HEADERS, evaluatorPageHtml } from './evaluator-script.js';

const EVALUATOR_URL = `${EVALUATOR_ORIGIN}/`;
/** Worker fallback: how much longer than the template limit the page itself may take before it is given up. */
const BACKSTOP_GRACE_MS = 2_000;
/** Realm: how long a page may take to answer after its evaluation was terminated. */
const RECOVER_MS = 2_000;
const OPEN_TIMEOUT_MS = 15_000;
/** A trivial call that answers only after a task boundary, i.e. once the microtask queue is empty. */
const PING = "new Promise(function (resolve) { var c = new MessageChannel(); c.port1.onmessage = function () { c.port1.close(); resolve('pong'); }; c.port2.postMessage(null); })";

/** Templates to evaluate, by part name (`main`, `header`, `footer`), as precompiled code. */
export type CompiledParts = Record<string, string>;

/** `shadow-realm`: a fresh ShadowRealm per document (Web Worker fallback); `worker`: a fresh Web Worker per document. */
export type EvaluatorKind = 'shadow-realm' | 'worker';

export interface EvaluateOptions {
  timeoutMs: number;
  /** Output limit in UTF-16 code units (a lower bound of the UTF-8 size). */
  limitChars: number;
  limitBytes: number;
  signal: AbortSignal;
}

export interface EvaluatorOpenOptions {
  /** What the browser was launched for; a `shadow-realm` page that ends up on workers logs a warning. */
  preferred: EvaluatorKind;
  logger: Logger;
}

interface HarnessResult {
  kind: 'ok' | 'timeout' | 'too-large' | 'error' | 'failed';
  out?: Record<string, string>;
  message?: string;
  template?: string;
  line?: number;
  column?: number;
  evalMs?: number;
}

let warnedFallback = false;

/** A sandboxed evaluator page. Not safe for concurrent use: one evaluation at a time. */
export class EvaluatorPage {
  private constructor(
    private readonly target: PageTarget,
    private readonly globalObjectId: string,
    /** How this page evaluates: decided by the page when it loads. */
    readonly kind: EvaluatorKind,
  ) {}

  /** Opens the page and loads the harness, which probes for ShadowRealm (or starts its first worker). */
  static async open(root: CDPSession, room: ClosedRoomOptions, options: EvaluatorOpenOptions = { preferred: 'shadow-realm', logger: room.logger }): Promise<EvaluatorPage> {
    const target = await PageTarget.open(root, { background: true });
    const { session } = target;
    const deadline = timeoutSignal(OPEN_TIMEOUT_MS, () => new AppError('RENDER_FAILED', 'The template sandbox did not start in time'));
    try {
      const closedRoom = new ClosedRoom(session, room);
      closedRoom.serve(EVALUATOR_URL, { html: evaluatorPageHtml(), headers: EVALUATOR_HEADERS }, true);
      await closedRoom.enable();
      const signal = AbortSignal.any([deadline.signal, target.lost]);
      await target.navigate(options.preferred === 'worker' ? `${EVALUATOR_URL}#worker` : EVALUATOR_URL, signal);
      const [{ result: global }, { result: mode }] = await raceSignal(
        Promise.all([
          session.send('Runtime.evaluate', { expression: 'globalThis' }),
          session.send('Runtime.evaluate', { expression: 'globalThis.pressroomEvaluator', returnByValue: true }),
        ]),
        signal,
      );
      if (!global.objectId) throw new Error('evaluator page has no global object');
      const evaluator = mode.value as { mode?: string; reason?: string } | undefined;
      if (evaluator?.mode !== 'realm' && evaluator?.mode !== 'worker') throw new Error('the evaluator harness did not start');
      const kind: EvaluatorKind = evaluator.mode === 'realm' ? 'shadow-realm' : 'worker';
      if (kind === 'worker' && options.preferred === 'shadow-realm' && !warnedFallback) {
        warnedFallback = true;
        options.logger.warn(
          { reason: evaluator.reason },
          'Templates are evaluated in a Web Worker per document (slower): this Chromium cannot evaluate them in a ShadowRealm',
        );
      }
      return new EvaluatorPage(target, global.objectId, kind);
    } catch (error) {
      await target.close();
      throw error;
    } finally {
      deadline.clear();
    }
  }

  /** True once the page crashed, hung or was closed; the pool must replace it. */
  get isLost(): boolean {
    return this.target.isLost;
  }

  /** Closes the page (and with it any worker still running). */
  close(): Promise<void> {
    return this.target.close();
  }

  /** Evaluates the parts with `dataJson`; returns the HTML of each part or throws a template AppError. */
  async evaluate(parts: CompiledParts, dataJson: string, options: EvaluateOptions): Promise<{ html: Record<string, string>; evalMs: number }> {
    // Realm: the deadline is ours (the page's thread is busy running the template). Worker: the
    // harness terminates the worker at the limit; ours is a backstop in case the page hangs.
    const realm = this.kind === 'shadow-realm';
    const deadline = timeoutSignal(realm ? options.timeoutMs : options.timeoutMs + BACKSTOP_GRACE_MS, () => templateTimeout(options.timeoutMs));
    const signal = AbortSignal.any([options.signal, deadline.signal, this.target.lost]);
    const templates = realm ? withoutImportKeyword(parts) : parts;
    let result: HarnessResult;
    try {
      const response = await raceSignal(
        this.target.session.send('Runtime.callFunctionOn', {
          objectId: this.globalObjectId,
          functionDeclaration: 'function (t, d, ms, limit) { return this.pressroomEvaluate(t, d, ms, limit); }',
          arguments: [{ value: templates }, { value: dataJson }, { value: options.timeoutMs }, { value: options.limitChars }],
          awaitPromise: true,
          returnByValue: true,
        }),
        signal,
      );
      if (response.exceptionDetails) throw new Error(`evaluator harness threw: ${response.exceptionDetails.text}`);
      result = response.result.value as HarnessResult;
    } catch (error) {
      const crashed = this.target.lost.aborted && (this.target.lost.reason as AppError).details?.reason === 'crashed';
      if (crashed) {
        this.target.markLost('abandoned');
        throw new AppError('TEMPLATE_RENDER_ERROR', 'The template used too much memory and was stopped', { cause: error });
      }
      // The evaluation may still be running in there: stop it, or never reuse the page.
      if (realm && signal.aborted && !this.target.isLost) await this.#interrupt();
      else this.target.markLost('abandoned');
      throw error instanceof AppError || options.signal.aborted ? error : new AppError('RENDER_FAILED', 'The template sandbox failed', { cause: error });
    } finally {
      deadline.clear();
    }
    // The harness could not evaluate at all: something is wrong with this page, open a new one.
    if (result.kind === 'failed') this.target.markLost('abandoned');
    // Worker stopped at the time limit: `terminate()` returns before the worker's thread has
    // stopped, and a worker caught mid-allocation can still run its renderer out of memory a few
    // hundred ms later — taking the NEXT document on this page down with it (seen in CI). Such a
    // page is never reused; the pool opens a fresh one (in a fresh renderer process).
    if (result.kind === 'timeout' && this.kind === 'worker') this.target.markLost('abandoned');
    return { html: toParts(result, options), evalMs: result.evalMs ?? 0 };
  }

  /**
   * Stops whatever runs on the page's main thread (a runaway template, or its endless microtask
   * chain) and checks that the page answers again; gives the page up if it does not.
   * `Runtime.terminateExecution` ends the current script, or the next one if none is running, so
   * the first ping may be the one that absorbs it: ping up to three times.
   */
  async #interrupt(): Promise<void> {
    const { session } = this.target;
    const recover = timeoutSignal(RECOVER_MS, () => new Error('the evaluator page did not recover'));
    const signal = AbortSignal.any([recover.signal, this.target.lost]);
    try {
      // Not awaited: its answer comes only once the terminated script has unwound.
      session.send('Runtime.terminateExecution').catch(() => {});
      for (let attempt = 0; attempt < 3; attempt++) {
        const ping = await raceSignal(session.send('Runtime.evaluate', { expression: PING, awaitPromise: true, returnByValue: true }), signal);
        if (!ping.exceptionDetails && ping.result.value === 'pong') return;
      }
      this.target.markLost('abandoned');
    } catch {
      this.target.markLost('abandoned');
    } finally {
      recover.clear();
    }
  }
}

/**
 * `import` → `\u0069mport` everywhere in the code: the same characters inside strings, regular
 * expressions and comments, the same name as part of an identifier, and a syntax error as the
 * keyword (keywords cannot contain escapes), so no `import()` can reach the realm. An odd run of
 * backslashes before it (`\i` = `i` in a string) loses one backslash, keeping the meaning.
 */
function withoutImportKeyword(parts: CompiledParts): CompiledParts {
  const out: CompiledParts = {};
  for (const [name, code] of Object.entries(parts)) {
    out[name] = code.includes('import') ? code.replace(/(\\*)import/g, (_, slashes: string) => `${slashes.length % 2 === 1 ? slashes.slice(1) : slashes}\\u0069mport`) : code;
  }
  return out;
}

function toParts(result: HarnessResult, options: EvaluateOptions): Record<string, string> {
  switch (result.kind) {
    case 'ok': {
      const html = result.out ?? {};
      let bytes = 0;
      for (const part of Object.values(html)) bytes += Buffer.byteLength(part, 'utf8');
      if (bytes > options.limitBytes) throw outputTooLarge(options.limitBytes);
      return html;
    }
    case 'timeout':
      throw templateTimeout(options.timeoutMs);
    case 'too-large':
      throw outputTooLarge(options.limitBytes);
    case 'error':
      throw renderError(result);
    default:
      throw new AppError('RENDER_FAILED', 'The template sandbox failed to start', { details: { reason: result.message } });
  }
}

function templateTimeout(ms: number): AppError {
  return new AppError('TEMPLATE_TIMEOUT', `The template did not finish within ${ms} ms; look for an endless loop, a huge range() or runaway recursion`, {
    details: { timeoutMs: ms },
  });
}

function outputTooLarge(limitBytes: number): AppError {
  const limit = limitBytes >= 1024 * 1024 ? `${Math.round((limitBytes / 1024 / 1024) * 10) / 10} MiB` : `${Math.round(limitBytes / 1024)} KiB`;
  return new AppError('TEMPLATE_OUTPUT_TOO_LARGE', `The template produced more than ${limit} of HTML`, { details: { limitBytes } });
}

function renderError(result: HarnessResult): AppError {
  const details: ErrorDetails = {};
  if (result.line !== undefined) details.line = result.line;
  if (result.column !== undefined) details.column = result.column;
  const part = result.template && result.template !== 'main' ? `${result.template}_html ` : '';
  if (part) details.template = `${result.template}_html`;
  const where = result.line === undefined ? '' : ` (${part}line ${result.line}${result.column === undefined ? '' : `, column ${result.column}`})`;
  const message = (result.message ?? 'The template failed').replace(/^Error: /, '');
  return new AppError('TEMPLATE_RENDER_ERROR', `Template error${where}: ${message}`, { details });
}
