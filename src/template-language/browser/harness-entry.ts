/**
 * The evaluator page's harness, in the page's main world; Node calls `pressroomEvaluate` once per
 * document (`browser/sandbox/evaluator-page.ts` explains the design). The page has run SES
 * `lockdown()` (`lockdown-entry.ts`) before this; each document is evaluated in a FRESH SES
 * `Compartment` on this thread: a new global holding nothing but the frozen intrinsics, its own
 * `Function`/`eval`, its own copy of nunjucks-slim and of the document runtime, the document's
 * compiled templates and the data as a JSON string. The compartment returns ONE string (the result as
 * JSON) and is dropped. The answer waits for a task boundary, so every promise job the document
 * queued has run by then. Node enforces the time limit (`Runtime.terminateExecution`) and replaces
 * the page. (A second evaluator, a fresh Web Worker per document, was kept for tests only; issue 51
 * removed it: it named no guarantee the compartment does not give.)
 *
 * Template code never runs with this global: the harness only reads strings and plain data it
 * parsed or cloned itself.
 */
import { createDocumentHelpers, type DocumentHelpers } from './document-helpers.js';
import type { DocumentResult, EvaluationWarning } from './document-result.js';

/** What the harness answers Node (`HarnessResult` in evaluator-page.ts). */
type HarnessResult =
  | { kind: 'ok'; out: Record<string, string>; warnings: EvaluationWarning[]; evalMs?: number }
  | { kind: 'too-large' | 'timeout' | 'miss'; evalMs?: number }
  | { kind: 'error' | 'failed'; message: string; template?: string; line?: number; column?: number; evalMs?: number };

// Intrinsics of this (the harness's) realm; template code never runs here, captured anyway.
const parseJson = JSON.parse;
const keysOf = Object.keys;
const now = performance.now.bind(performance);
const toText = String;
const stringify = JSON.stringify;
const isArray = Array.isArray;
const num = (v: unknown): number | undefined => (typeof v === 'number' && isFinite(v) ? v : undefined);
const noResult = (): HarnessResult => ({ kind: 'error', message: 'The template produced no result' });

/** Checks a document's answer: only strings, only the parts asked for, within the limit. */
function check(msg: unknown, names: string[], limit: number): HarnessResult {
  if (!msg || typeof msg !== 'object') return noResult();
  const answer = msg as Partial<Record<string, unknown>>;
  if (answer.kind === 'too-large') return { kind: 'too-large' };
  if (answer.kind === 'error') {
    return {
      kind: 'error',
      message: toText(answer.message).slice(0, 300),
      template: toText(answer.template || ''),
      line: num(answer.line),
      column: num(answer.column),
    };
  }
  if (answer.kind !== 'ok' || !answer.out || typeof answer.out !== 'object') return noResult();
  const given = answer.out as Record<string, unknown>;
  const out: Record<string, string> = {};
  let total = 0;
  for (const name of names) {
    const html = given[name];
    if (typeof html !== 'string') return noResult();
    total += html.length;
    if (total > limit) return { kind: 'too-large' };
    out[name] = html;
  }
  return { kind: 'ok', out, warnings: checkWarnings(answer.warnings) };
}

/** At most 100 warnings of two short strings each. */
function checkWarnings(given: unknown): EvaluationWarning[] {
  if (!isArray(given)) return [];
  const warnings: EvaluationWarning[] = [];
  for (const w of given.slice(0, 100)) {
    if (!w || typeof w !== 'object') continue;
    const { code, message } = w as Record<string, unknown>;
    if (typeof code === 'string' && typeof message === 'string')
      warnings.push({ code: code.slice(0, 60), message: message.slice(0, 300) });
  }
  return warnings;
}

// ---- Compartment evaluator (default): a fresh Compartment per document, on this thread -------
// Captured at start; lockdown() has frozen them, so no document can have replaced them.
const NewCompartment = typeof Compartment === 'function' ? Compartment : null;
const NewChannel = MessageChannel;
// The helpers (Intl, barcodes, Markdown) live in this realm, which has Intl; every compartment gets
// the same hardened object: frozen functions that take plain values and return strings.
const compartmentHelpers: DocumentHelpers | null = NewCompartment ? harden(createDocumentHelpers()) : null;

function evaluateInCompartment(
  templates: Record<string, string>,
  data: string,
  _timeoutMs: number,
  limit: number,
  strict: boolean,
): Promise<HarnessResult> {
  const started = now();
  const names = keysOf(templates);
  const parts = names.map((name) => `${stringify(name)}: function () {\n${templates[name]}\n}`).join(',\n');
  let text: unknown;
  try {
    const compartment = new NewCompartment!({ __options__: true, globals: { pressroomHelpers: compartmentHelpers } });
    const render = compartment.evaluate(
      `${DOCUMENT_RUNTIME_SOURCE}\n;pressroomDocument.create(${NUNJUCKS_EXPRESSION}, {${parts}}, pressroomHelpers)`,
    );
    text = typeof render === 'function' ? render(data, limit, strict) : null;
  } catch (e) {
    // SES refused the code (it is not code our compiler produces), or the document broke its own copy.
    let message = 'The template failed';
    try {
      message = toText(
        e && (e as { message?: unknown }).message !== undefined ? (e as { message: unknown }).message : e,
      );
    } catch {
      /* keep the default */
    }
    text = stringify({ kind: 'error', message: message.split('\n')[0]!.slice(0, 300) } satisfies DocumentResult);
  }
  function readAnswer(): HarnessResult {
    // JSON escaping can at most sextuple a string (\uXXXX); anything longer is over the limit.
    if (typeof text !== 'string') return noResult();
    if (text.length > limit * 6 + 4096) return { kind: 'too-large' };
    try {
      return check(parseJson(text), names, limit);
    } catch {
      return noResult();
    }
  }
  // Answer after a task boundary: every promise job the document queued runs first (an endless
  // chain of them holds the answer back until Node stops the page at the time limit).
  return new Promise((resolve) => {
    const channel = new NewChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      const result = readAnswer();
      result.evalMs = now() - started;
      resolve(result);
    };
    channel.port2.postMessage(null);
  });
}

// ---- Compiled templates kept between documents -------------------------------------------------
// Node sends a template's code once and then only its id. This list (id → code, least recently
// used first) takes the same steps in the same order as Node's (SentTemplates in
// evaluator-page.ts), so both agree on what is held; id 0 is never kept. Only this harness reads
// it: documents get the code as a string, never the list.
const held = new Map<number, string>();
function heldTemplates(
  sent: Record<string, string | null>,
  ids: Record<string, number>,
): Record<string, string> | null {
  const templates: Record<string, string> = {};
  for (const name of keysOf(sent)) {
    const id = ids[name] ?? 0;
    let code = sent[name];
    if (typeof code === 'string') {
      if (id > 0) {
        held.set(id, code);
        if (held.size > TEMPLATE_CACHE_SIZE) held.delete(held.keys().next().value!);
      }
    } else {
      code = held.get(id);
      if (typeof code !== 'string') {
        held.clear();
        return null;
      }
      held.delete(id);
      held.set(id, code);
    }
    templates[name] = code;
  }
  return templates;
}

// ---- Entry points (called by Node over CDP) ---------------------------------------------------
const page = globalThis as unknown as Record<string, unknown>;
page.pressroomEvaluator = { mode: NewCompartment ? 'compartment' : 'failed' };
const evaluate = evaluateInCompartment;
page.pressroomEvaluate = (
  sent: Record<string, string | null>,
  ids: Record<string, number>,
  data: string,
  timeoutMs: number,
  limit: number,
  strict: unknown,
) => {
  const templates = heldTemplates(sent, ids);
  return templates ? evaluate(templates, data, timeoutMs, limit, strict === true) : { kind: 'miss' };
};
