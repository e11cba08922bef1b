/**
 * Node side of the template evaluator: one Chromium page per pool slot, at an opaque-origin
 * sandboxed URL (CSP `sandbox allow-scripts`, `connect-src 'none'`, behind the closed room), whose
 * harness (`evaluator-script.ts`) evaluates each document in a dedicated Web Worker. One CDP round
 * trip per evaluation.
 *
 * Template code cannot reach the server by construction: it runs only inside Chromium, in a worker
 * of a sandboxed page with no network, no files and no Node API; the data goes in as a JSON string
 * and the HTML comes out as strings.
 *
 * Why nothing survives from one document to the next — default (`compartment`) evaluator:
 *   1. The worker runs SES `lockdown()` before any document: every intrinsic shared by the
 *      documents it will evaluate (Object.prototype, Array.prototype, String.prototype, JSON,
 *      Promise, Function.prototype, …) is frozen, and the mutable or ambient ones (Date.now,
 *      Math.random, Error stack APIs, the function constructors reachable from prototypes) are
 *      tamed. `"".constructor.constructor` is an inert function that throws.
 *   2. Each document is evaluated in a FRESH `Compartment`: a new global object with nothing but
 *      those frozen intrinsics (no `self`, timers, `postMessage`, network or worker APIs), its own
 *      `Function`/`eval` bound to that global, its own copy of nunjucks (evaluated in it, so its
 *      runtime objects are its own), and the data as a JSON string parsed inside.
 *   3. So a document can change only objects of its own compartment. The next document gets a new
 *      compartment and a new nunjucks; nothing refers from one to the other; the old one is dropped.
 *   4. Nothing of a document runs later: its compartment has no timers or event APIs; promise jobs
 *      it queued run before the worker answers (the answer is posted after a task boundary), and an
 *      endless chain of them is that document's TEMPLATE_TIMEOUT. (A FinalizationRegistry callback
 *      could run later, but only on its own dead compartment's objects.)
 *   The `worker` evaluator (PRESSROOM_TEMPLATE_EVALUATOR=worker) instead starts a new worker — a new
 *   V8 isolate — per document and terminates it after: separation by process-level construction,
 *   at ~13 ms more CPU per document (measured; see docs/rendering.md).
 *
 * Limits:
 *   - output size: checked in the compartment/worker, again by the harness and again here;
 *   - time: the harness terminates the worker at `templateTimeoutMs`; a worker may still run for a
 *     moment after `terminate()`, so the page that ran it is closed and replaced (a fresh renderer
 *     process); Node gives a page up if it does not answer BACKSTOP_GRACE_MS after the limit;
 *   - memory: the per-isolate V8 heap cap (`launch-chromium.ts`); a template that exhausts it
 *     crashes the evaluator renderer: that render fails with TEMPLATE_RENDER_ERROR and the pool
 *     replaces the page.
 */
import type { CDPSession } from 'puppeteer-core';
import { AppError, type ErrorDetails } from '../../shared/errors.js';
import { raceSignal, timeoutSignal } from '../chromium/cdp-helpers.js';
import { ClosedRoom, EVALUATOR_ORIGIN, type ClosedRoomOptions } from '../chromium/closed-room.js';
import { PageTarget } from '../chromium/page-target.js';
import { EVALUATOR_HEADERS, evaluatorPageHtml } from './evaluator-script.js';

const EVALUATOR_URL = `${EVALUATOR_ORIGIN}/`;
/** How much longer than the template limit the page itself may take before it is given up. */
const BACKSTOP_GRACE_MS = 2_000;
const OPEN_TIMEOUT_MS = 15_000;

/** Templates to evaluate, by part name (`main`, `header`, `footer`), as precompiled code. */
export type CompiledParts = Record<string, string>;

/** `compartment`: a fresh SES Compartment per document in a reused, locked-down worker; `worker`: a fresh Web Worker per document. */
export type EvaluatorKind = 'compartment' | 'worker';

export interface EvaluateOptions {
  timeoutMs: number;
  /** Output limit in UTF-16 code units (a lower bound of the UTF-8 size). */
  limitChars: number;
  limitBytes: number;
  signal: AbortSignal;
}

export interface EvaluatorOpenOptions {
  kind: EvaluatorKind;
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

/** A sandboxed evaluator page. Not safe for concurrent use: one evaluation at a time. */
export class EvaluatorPage {
  private constructor(
    private readonly target: PageTarget,
    private readonly globalObjectId: string,
    readonly kind: EvaluatorKind,
  ) {}

  /** Opens the page and loads the harness, which starts its first worker. */
  static async open(root: CDPSession, room: ClosedRoomOptions, options: EvaluatorOpenOptions = { kind: 'compartment' }): Promise<EvaluatorPage> {
    const target = await PageTarget.open(root, { background: true });
    const { session } = target;
    const deadline = timeoutSignal(OPEN_TIMEOUT_MS, () => new AppError('RENDER_FAILED', 'The template sandbox did not start in time'));
    try {
      const closedRoom = new ClosedRoom(session, room);
      closedRoom.serve(EVALUATOR_URL, { html: evaluatorPageHtml(), headers: EVALUATOR_HEADERS }, true);
      await closedRoom.enable();
      const signal = AbortSignal.any([deadline.signal, target.lost]);
      await target.navigate(`${EVALUATOR_URL}#${options.kind}`, signal);
      const [{ result: global }, { result: mode }] = await raceSignal(
        Promise.all([
          session.send('Runtime.evaluate', { expression: 'globalThis' }),
          session.send('Runtime.evaluate', { expression: 'globalThis.pressroomEvaluator', returnByValue: true }),
        ]),
        signal,
      );
      if (!global.objectId) throw new Error('evaluator page has no global object');
      const evaluator = mode.value as { mode?: string } | undefined;
      if (evaluator?.mode !== options.kind) throw new Error('the evaluator harness did not start');
      return new EvaluatorPage(target, global.objectId, options.kind);
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
    // The harness terminates the worker at the limit; ours is a backstop in case the page hangs.
    const deadline = timeoutSignal(options.timeoutMs + BACKSTOP_GRACE_MS, () => templateTimeout(options.timeoutMs));
    const signal = AbortSignal.any([options.signal, deadline.signal, this.target.lost]);
    let result: HarnessResult;
    try {
      const response = await raceSignal(
        this.target.session.send('Runtime.callFunctionOn', {
          objectId: this.globalObjectId,
          functionDeclaration: 'function (t, d, ms, limit) { return this.pressroomEvaluate(t, d, ms, limit); }',
          arguments: [{ value: parts }, { value: dataJson }, { value: options.timeoutMs }, { value: options.limitChars }],
          awaitPromise: true,
          returnByValue: true,
        }),
        signal,
      );
      if (response.exceptionDetails) throw new Error(`evaluator harness threw: ${response.exceptionDetails.text}`);
      result = response.result.value as HarnessResult;
    } catch (error) {
      const crashed = this.target.lost.aborted && (this.target.lost.reason as AppError).details?.reason === 'crashed';
      this.target.markLost('abandoned');
      if (crashed) throw new AppError('TEMPLATE_RENDER_ERROR', 'The template used too much memory and was stopped', { cause: error });
      throw error instanceof AppError || options.signal.aborted ? error : new AppError('RENDER_FAILED', 'The template sandbox failed', { cause: error });
    } finally {
      deadline.clear();
    }
    // The harness could not evaluate at all: something is wrong with this page, open a new one.
    // Worker stopped at the time limit: `terminate()` returns before the worker's thread has
    // stopped, and a worker caught mid-allocation can still run its renderer out of memory a few
    // hundred ms later — taking the NEXT document on this page down with it (seen in CI). Such a
    // page is never reused; the pool opens a fresh one (in a fresh renderer process).
    if (result.kind === 'failed' || result.kind === 'timeout') this.target.markLost('abandoned');
    return { html: toParts(result, options), evalMs: result.evalMs ?? 0 };
  }
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
