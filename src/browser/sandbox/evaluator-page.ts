/**
 * Node side of the template evaluator: one Chromium page per pool slot, at an opaque-origin
 * sandboxed URL (CSP `sandbox allow-scripts`, `connect-src 'none'`, behind the closed room), whose
 * harness (`template-language/browser/harness-entry.ts`, page built by `evaluator-page-html.ts`) evaluates each document. One CDP round trip per evaluation.
 *
 * Template code cannot reach the server by construction: it runs only inside Chromium, in a page
 * with no network, no files and no Node API; the data goes in as a JSON string and the HTML comes
 * out as strings.
 *
 * Why nothing survives from one document to the next:
 *   1. The page runs SES `lockdown()` before any other code: every intrinsic shared by the
 *      documents it will evaluate (Object.prototype, Array.prototype, String.prototype, JSON,
 *      Promise, Function.prototype, …) is frozen, and the mutable or ambient ones (Date.now,
 *      Math.random, Error stack APIs, the function constructors reachable from prototypes) are
 *      tamed. `"".constructor.constructor` is an inert function that throws.
 *   2. Each document is evaluated in a FRESH `Compartment`: a new global object with nothing but
 *      those frozen intrinsics (no `window`, `document`, timers, messaging or network APIs), its own
 *      `Function`/`eval` bound to that global, its own copy of nunjucks (evaluated in it, so its
 *      runtime objects are its own), and the data as a JSON string parsed inside.
 *   3. So a document can change only objects of its own compartment. The next document gets a new
 *      compartment and a new nunjucks; nothing refers from one to the other; the old one is dropped.
 *   4. Nothing of a document runs later: its compartment has no timers or event APIs; promise jobs
 *      it queued run before the page answers (the answer waits for a task boundary), and an
 *      endless chain of them is that document's TEMPLATE_TIMEOUT. (A FinalizationRegistry callback
 *      could run later, but only on its own dead compartment's objects.)
 *   The page lives as long as its browser (recycled every `BROWSER_RECYCLE_AFTER`
 *   documents, render-limits.ts), unless a document times out or crashes it.
 *   (A second evaluator, a new Web Worker per document, was kept for tests until issue 51: it gave
 *   no guarantee this one does not, at several times its CPU.)
 *
 * Limits:
 *   - output size: checked in the compartment, again by the harness and again here;
 *   - time: Node stops the page's JavaScript at `templateTimeoutMs` (`Runtime.terminateExecution`,
 *     which interrupts even an endless loop) and replaces the page;
 *   - memory: the per-isolate V8 heap cap (`launch-chromium.ts`); a template that exhausts it
 *     crashes the evaluator renderer: that render fails with TEMPLATE_RENDER_ERROR and the pool
 *     replaces the page.
 *
 * Why the compartment runs on the page's main thread rather than in a worker: the thread hops
 * (page → worker → page) cost milliseconds per document under load, for no isolation a locked-down realm
 * and a fresh compartment do not already give; Node's terminateExecution stops a runaway document
 * as surely as terminating a worker does.
 */
import type { CDPSession } from 'puppeteer-core';
import type { DocumentWarning } from '../../shared/document-warnings.js';
import { AppError, type ErrorDetails } from '../../shared/errors.js';
import { raceSignal, timeoutSignal } from '../cdp-helpers.js';
import { ClosedRoom, EVALUATOR_ORIGIN, type ClosedRoomOptions } from '../pages/closed-room.js';
import { PageTarget } from '../page-target.js';
import { EVALUATOR_HEADERS, evaluatorPageHtml, PAGE_TEMPLATE_CACHE_SIZE } from './evaluator-page-html.js';

const EVALUATOR_URL = `${EVALUATOR_ORIGIN}/`;
const OPEN_TIMEOUT_MS = 15_000;

/** Templates to evaluate, by part name (`main`, `header`, `footer`), as precompiled code. */
export type CompiledParts = Record<string, string>;

export interface EvaluateOptions {
  timeoutMs: number;
  /** Output limit in UTF-16 code units (a lower bound of the UTF-8 size). */
  limitChars: number;
  limitBytes: number;
  signal: AbortSignal;
  /**
   * The template's strict mode: an undefined variable, or a text where a number or date belongs, fails
   * the evaluation (TEMPLATE_RENDER_ERROR naming it) instead of being a warning. @defaultValue false
   */
  strict?: boolean;
}

/** The evaluated HTML of each part, the warnings evaluation raised, and the time spent in the page. */
export interface EvaluatedParts {
  html: Record<string, string>;
  warnings: DocumentWarning[];
  evalMs: number;
}

interface HarnessResult {
  /** `miss`: the page no longer holds a template it was told it holds (never expected). */
  kind: 'ok' | 'timeout' | 'too-large' | 'error' | 'failed' | 'miss';
  out?: Record<string, string>;
  /** `ok`: what evaluation warned about (undefined variables, text where a number belongs…). */
  warnings?: { code: string; message: string }[];
  message?: string;
  template?: string;
  line?: number;
  column?: number;
  evalMs?: number;
}

/** A sandboxed evaluator page. Not safe for concurrent use: one evaluation at a time. */
export class EvaluatorPage {
  readonly #sentTemplates = new SentTemplates();

  private constructor(
    private readonly target: PageTarget,
    private readonly globalObjectId: string,
  ) {}

  /** Opens the page and loads the harness (after SES's lockdown). */
  static async open(root: CDPSession, room: ClosedRoomOptions): Promise<EvaluatorPage> {
    // Built (bundled, when running from source) once per process, before the start-up deadline runs.
    const html = evaluatorPageHtml();
    // Every step is under the deadline: a page whose renderer died before it committed never answers.
    const deadline = timeoutSignal(
      OPEN_TIMEOUT_MS,
      () => new AppError('RENDER_FAILED', 'The template sandbox did not start in time'),
    );
    let target: PageTarget;
    try {
      target = await PageTarget.open(root, { background: true }, deadline.signal);
    } catch (error) {
      deadline.clear();
      throw error;
    }
    const { session } = target;
    try {
      const closedRoom = new ClosedRoom(session, room);
      closedRoom.serve(EVALUATOR_URL, { html, headers: EVALUATOR_HEADERS }, true);
      const signal = AbortSignal.any([deadline.signal, target.lost]);
      await raceSignal(closedRoom.enable(), signal);
      await target.navigate(EVALUATOR_URL, signal);
      const [{ result: global }, { result: mode }] = await raceSignal(
        Promise.all([
          session.send('Runtime.evaluate', { expression: 'globalThis' }),
          session.send('Runtime.evaluate', { expression: 'globalThis.pressroomEvaluator', returnByValue: true }),
        ]),
        signal,
      );
      if (!global.objectId) throw new Error('evaluator page has no global object');
      const evaluator = mode.value as { mode?: string } | undefined;
      if (evaluator?.mode !== 'compartment') throw new Error('the evaluator harness did not start');
      return new EvaluatorPage(target, global.objectId);
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

  /** Closes the page. */
  close(): Promise<void> {
    return this.target.close();
  }

  /** Evaluates the parts with `dataJson`; returns the HTML of each part or throws a template AppError. */
  async evaluate(parts: CompiledParts, dataJson: string, options: EvaluateOptions): Promise<EvaluatedParts> {
    const deadline = timeoutSignal(options.timeoutMs, () => templateTimeout(options.timeoutMs));
    const signal = AbortSignal.any([options.signal, deadline.signal, this.target.lost]);
    let result: HarnessResult;
    try {
      result = await this.#call(parts, dataJson, options, signal);
      if (result.kind === 'miss') {
        // Never expected: the page lost step with #sentTemplates. Once more, with all the code.
        this.#sentTemplates.clear();
        result = await this.#call(parts, dataJson, options, signal);
      }
    } catch (error) {
      const crashed = this.target.lost.aborted && (this.target.lost.reason as AppError).details?.reason === 'crashed';
      // Still running (a runaway template, or a render deadline): stop its JavaScript now, so the
      // renderer does not spin until the page is closed.
      if (!crashed) this.target.session.send('Runtime.terminateExecution').catch(() => {});
      this.target.markLost('abandoned');
      if (crashed)
        throw new AppError('TEMPLATE_RENDER_ERROR', 'The template used too much memory and was stopped', {
          cause: error,
          details: { reason: 'crashed' },
        });
      throw error instanceof AppError || options.signal.aborted
        ? error
        : new AppError('RENDER_FAILED', 'The template sandbox failed', { cause: error });
    } finally {
      deadline.clear();
    }
    // The harness could not evaluate at all, or was stopped: this page is never reused; the pool opens a fresh one.
    if (result.kind === 'failed' || result.kind === 'timeout' || result.kind === 'miss')
      this.target.markLost('abandoned');
    return { html: toParts(result, options), evalMs: result.evalMs ?? 0, warnings: result.warnings ?? [] };
  }

  /** One call of the harness: the code of templates the page does not hold yet, the ids of all. */
  async #call(
    parts: CompiledParts,
    dataJson: string,
    options: EvaluateOptions,
    signal: AbortSignal,
  ): Promise<HarnessResult> {
    const message = this.#sentTemplates.prepare(parts);
    const response = await raceSignal(
      this.target.session.send('Runtime.callFunctionOn', {
        objectId: this.globalObjectId,
        functionDeclaration:
          'function (t, ids, d, ms, limit, strict) { return this.pressroomEvaluate(t, ids, d, ms, limit, strict); }',
        arguments: [
          { value: message.code },
          { value: message.ids },
          { value: dataJson },
          { value: options.timeoutMs },
          { value: options.limitChars },
          { value: options.strict === true },
        ],
        awaitPromise: true,
        returnByValue: true,
      }),
      signal,
    );
    if (response.exceptionDetails) throw new Error(`evaluator harness threw: ${response.exceptionDetails.text}`);
    return response.result.value as HarnessResult;
  }
}

/** Larger compiled templates are sent every time rather than kept. */
const PAGE_TEMPLATE_CACHE_MAX_CHARS = 1024 * 1024;

/**
 * Which compiled templates the page already holds, so their code is not sent again: every byte
 * through the DevTools protocol costs (per byte, on every document: docs/performance-log/2026-11-22-to-28-service.md). The harness keeps the same least-recently-used list by id and applies the same
 * steps in the same order, so the two stay in step without asking each other; should they ever
 * differ, the harness answers `miss` and both start over.
 */
class SentTemplates {
  /** code → id, least recently used first. */
  readonly #ids = new Map<string, number>();
  #nextId = 1;

  /** The call's templates: code only for parts the page does not hold (id 0: never kept). */
  prepare(parts: CompiledParts): { code: Record<string, string | null>; ids: Record<string, number> } {
    const code: Record<string, string | null> = {};
    const ids: Record<string, number> = {};
    for (const [name, source] of Object.entries(parts)) {
      let id = this.#ids.get(source);
      if (id !== undefined) {
        this.#ids.delete(source);
        this.#ids.set(source, id);
        code[name] = null;
      } else if (source.length > PAGE_TEMPLATE_CACHE_MAX_CHARS) {
        id = 0;
        code[name] = source;
      } else {
        id = this.#nextId++;
        this.#ids.set(source, id);
        if (this.#ids.size > PAGE_TEMPLATE_CACHE_SIZE) this.#ids.delete(this.#ids.keys().next().value!);
        code[name] = source;
      }
      ids[name] = id;
    }
    return { code, ids };
  }

  clear(): void {
    this.#ids.clear();
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
      throw new AppError('RENDER_FAILED', 'The template sandbox failed to start', {
        details: { reason: result.message },
      });
  }
}

function templateTimeout(ms: number): AppError {
  return new AppError(
    'TEMPLATE_TIMEOUT',
    `The template did not finish within ${ms} ms; look for an endless loop, a huge range() or runaway recursion`,
    {
      details: { timeoutMs: ms },
    },
  );
}

function outputTooLarge(limitBytes: number): AppError {
  const limit =
    limitBytes >= 1024 * 1024
      ? `${Math.round((limitBytes / 1024 / 1024) * 10) / 10} MiB`
      : `${Math.round(limitBytes / 1024)} KiB`;
  return new AppError('TEMPLATE_OUTPUT_TOO_LARGE', `The template produced more than ${limit} of HTML`, {
    details: { limitBytes },
  });
}

/** Evaluated parts by name, as errors name them (`part`): `main` is the html. */
const PART_OF_TEMPLATE: Record<string, string> = { main: 'html', header: 'header', footer: 'footer', css: 'css' };

function renderError(result: HarnessResult): AppError {
  const details: ErrorDetails = {};
  const part = result.template ? PART_OF_TEMPLATE[result.template] : undefined;
  if (part) details.part = part;
  if (result.line !== undefined) details.line = result.line;
  if (result.column !== undefined) details.column = result.column;
  const label = part && part !== 'html' ? (part === 'css' ? 'css ' : `page.${part}_html `) : '';
  const where =
    result.line === undefined
      ? ''
      : ` (${label}line ${result.line}${result.column === undefined ? '' : `, column ${result.column}`})`;
  const message = (result.message ?? 'The template failed').replace(/^Error: /, '');
  return new AppError('TEMPLATE_RENDER_ERROR', `Template error${where}: ${message}`, { details });
}
