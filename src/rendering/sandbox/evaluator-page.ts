/**
 * Node side of the template evaluator: one Chromium page per pool slot, at an opaque-origin
 * sandboxed URL, whose harness runs each evaluation in a fresh dedicated Web Worker
 * (`evaluator-script.ts`). One CDP round trip per evaluation.
 *
 * Limits, innermost first:
 *   1. the worker checks the output size before posting it back (and the harness again);
 *   2. the harness terminates the worker after the template time limit;
 *   3. here, a backstop a little later: if the page itself stops answering, the page is given up
 *      (the pool closes it and opens a new one) and the render fails with TEMPLATE_TIMEOUT;
 *   4. a renderer crash during evaluation (a worker exhausting memory takes the renderer with it)
 *      fails only this render; the pool replaces the page.
 *
 * Cost, measured on the 2-core benchmark VM (under load from other work, so ±30 %): a fresh worker
 * costs ~18–30 ms of CPU (browser ~6–9 ms, renderer ~12–20 ms; nunjucks-slim itself loads in ~2 ms),
 * started in the background right after the previous evaluation so it is off the latency path; the
 * invoice then evaluates in ~6 ms in the cold worker, ~15 ms per render including the round trip.
 * Alternatives measured and rejected: a sandboxed iframe per evaluation (~40–55 ms CPU, in or out of
 * process: more than a worker), a long-lived worker (fast, but not a fresh realm
 * by construction). Nothing cheaper gives a fresh JavaScript realm per document in Chromium.
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

export interface EvaluateOptions {
  timeoutMs: number;
  /** Output limit in UTF-16 code units (a lower bound of the UTF-8 size). */
  limitChars: number;
  limitBytes: number;
  signal: AbortSignal;
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
  ) {}

  /** Opens the page, loads the harness and starts its first worker. */
  static async open(root: CDPSession, room: ClosedRoomOptions): Promise<EvaluatorPage> {
    const target = await PageTarget.open(root, { background: true });
    const { session } = target;
    const deadline = timeoutSignal(OPEN_TIMEOUT_MS, () => new AppError('RENDER_FAILED', 'The template sandbox did not start in time'));
    try {
      const closedRoom = new ClosedRoom(session, room);
      closedRoom.serve(EVALUATOR_URL, { html: evaluatorPageHtml(), headers: EVALUATOR_HEADERS }, true);
      await closedRoom.enable();
      const signal = AbortSignal.any([deadline.signal, target.lost]);
      await target.navigate(EVALUATOR_URL, signal);
      const { result } = await raceSignal(session.send('Runtime.evaluate', { expression: 'globalThis' }), signal);
      if (!result.objectId) throw new Error('evaluator page has no global object');
      return new EvaluatorPage(target, result.objectId);
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
    const backstop = timeoutSignal(options.timeoutMs + BACKSTOP_GRACE_MS, () => templateTimeout(options.timeoutMs));
    const signal = AbortSignal.any([options.signal, backstop.signal, this.target.lost]);
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
      // Whatever happened, an evaluation may still be running in there: never reuse the page.
      const crashed = this.target.lost.aborted && (this.target.lost.reason as AppError).details?.reason === 'crashed';
      this.target.markLost('abandoned');
      if (crashed) {
        throw new AppError('TEMPLATE_RENDER_ERROR', 'The template used too much memory and was stopped', { cause: error });
      }
      throw error instanceof AppError || options.signal.aborted ? error : new AppError('RENDER_FAILED', 'The template sandbox failed', { cause: error });
    } finally {
      backstop.clear();
    }
    // The harness could not start a worker: something is wrong with this page, open a new one.
    if (result.kind === 'failed') this.target.markLost('abandoned');
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
