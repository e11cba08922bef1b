/**
 * Live preview: after the input stops changing for `delayMs`, POST /v1/templates/preview and show the
 * PDF from a blob: URL. A newer input aborts the request in flight; a 429 waits for Retry-After and tries
 * again; a 422 keeps the last good PDF and reports the template's problem with its line.
 *
 * States: idle → waiting (debounce) → rendering → ready | error | rate_limited (→ waiting on retry).
 * useLiveFields: the fields the text as typed would have (POST /v1/templates/fields), so the form
 * follows the HTML before it is saved.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../../api/client.js';
import { api } from '../../api/session.js';
import type { Field, PageSetup } from '../../lib/api-types.js';
import { looksLikeInvoice } from '../../lib/einvoice/einvoice.js';
import { keepUsedKeys, type DataObject } from '../../lib/form-data.js';
import { parseWarningHeaders, type DocumentWarning } from '../../lib/warnings.js';
import { onlyChangedPane, problemsFromBody, withSources, type CodePane, type Problem } from '../../lib/problems.js';

export interface PreviewInput {
  html: string;
  css: string;
  page: PageSetup;
  data: Record<string, unknown>;
  /** Render as a strict template: an undefined variable is a problem at its line, not a warning. */
  strict: boolean;
  /**
   * A saved template to preview instead of the text (a form template, whose PDF is always the saved
   * draft's): only `data` is sent with it, and html, css, page and strict are not.
   */
  templateId?: string;
}

export type PreviewStatus = 'idle' | 'waiting' | 'rendering' | 'ready' | 'error' | 'rate_limited' | 'paused';

export interface PreviewState {
  status: PreviewStatus;
  /** blob: URL of the latest good PDF. */
  url: string | null;
  /** How many PDFs were shown so far (tests and screen readers can tell a new one arrived). */
  version: number;
  message: string | null;
  problems: Problem[];
  renderedAt: Date | null;
  /** What the latest good PDF needed and did not get (remote images, assets…), from its X-Pressroom-Warning* headers. */
  warnings: DocumentWarning[];
  /** The count X-Pressroom-Warnings gave (may exceed `warnings` when the details were cut). */
  warningCount: number;
  /** Why the data is refused although the text rendered (status `error`): see `refusedReason`. */
  refusal: string | null;
}

const INITIAL: PreviewState = {
  status: 'idle',
  url: null,
  version: 0,
  message: null,
  problems: [],
  renderedAt: null,
  warnings: [],
  warningCount: 0,
  refusal: null,
};

const sourcesOf = (input: PreviewInput): Record<CodePane, string> => ({
  html: input.html,
  css: input.css,
  header_html: input.page.header_html ?? '',
  footer_html: input.page.footer_html ?? '',
});

/**
 * `pausedReason` set (e.g. invalid JSON) holds the preview without sending anything. `refusedReason`
 * (a strict template's required field without a value, which the API refuses at every door but
 * cannot check on unsaved text) fails the preview with that reason, the verdict Run would get; the
 * text is still rendered, so the template's own problems are still found at their lines.
 */
export function usePreview(
  input: PreviewInput,
  options: { delayMs?: number; pausedReason?: string | null; refusedReason?: string | null } = {},
): PreviewState {
  const { delayMs = 800, pausedReason = null, refusedReason = null } = options;
  const [state, setState] = useState<PreviewState>(INITIAL);
  const [retryNonce, setRetryNonce] = useState(0);
  const urlRef = useRef<string | null>(null);
  // The template text of the latest good preview: an error without a `part` is placed on the one pane edited since.
  const lastGood = useRef<Record<CodePane, string> | null>(null);
  const key = JSON.stringify(input);

  useEffect(() => {
    if (pausedReason) {
      setState((s) => ({ ...s, status: 'paused', message: pausedReason }));
      return;
    }

    const controller = new AbortController();
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    setState((s) => ({ ...s, status: 'waiting', message: null, refusal: null }));
    const timer = setTimeout(async () => {
      setState((s) => ({ ...s, status: 'rendering' }));
      try {
        const body = input.templateId
          ? { template_id: input.templateId, data: input.data }
          : {
              html: input.html,
              css: input.css || undefined,
              page: input.page,
              data: input.data,
              ...(input.strict ? { strict: true } : {}),
            };
        const response = await api().raw('POST', '/v1/templates/preview', { body, signal: controller.signal });
        const blob = await response.blob();
        if (controller.signal.aborted) return;
        const { warnings, count } = parseWarningHeaders((name) => response.headers.get(name));
        const url = URL.createObjectURL(new Blob([blob], { type: 'application/pdf' }));
        if (urlRef.current) URL.revokeObjectURL(urlRef.current);
        urlRef.current = url;
        lastGood.current = sourcesOf(input);
        setState((s) => ({
          status: refusedReason ? 'error' : 'ready',
          url,
          version: s.version + 1,
          message: null,
          problems: [],
          renderedAt: new Date(),
          warnings,
          warningCount: count,
          refusal: refusedReason,
        }));
      } catch (error) {
        if (controller.signal.aborted || (error as Error).name === 'AbortError') return;
        if (error instanceof ApiError && error.status === 429) {
          const wait = error.retryAfterSeconds ?? 10;
          setState((s) => ({
            ...s,
            status: 'rate_limited',
            message: `Preview limit reached; trying again in ${wait} s.`,
          }));
          retryTimer = setTimeout(() => setRetryNonce((n) => n + 1), wait * 1000);
          return;
        }
        const sources = sourcesOf(input);
        const found =
          error instanceof ApiError && error.status === 422
            ? problemsFromBody(error.body, onlyChangedPane(lastGood.current, sources))
            : [];
        const problems = withSources(found, sources);
        setState((s) => ({
          ...s,
          status: 'error',
          message: (error as Error).message,
          problems,
          refusal: refusedReason,
        }));
      }
    }, delayMs);
    return () => {
      clearTimeout(timer);
      clearTimeout(retryTimer);
      controller.abort();
    };
    // `key` stands for `input`.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, delayMs, pausedReason, refusedReason, retryNonce]);

  useEffect(
    () => () => {
      if (urlRef.current) URL.revokeObjectURL(urlRef.current);
    },
    [],
  );

  return state;
}

/** The template text whose variables are the fields. */
export interface FieldSources {
  html: string;
  css: string;
  header_html: string;
  footer_html: string;
}

/**
 * The fields of the text as it is now, asked of the service a moment after the text stops changing;
 * null while the text is the saved one (its fields are the template's) or before the first answer. A
 * text that does not parse keeps the last fields (the preview marks the error). `data` gives the
 * fields' example help text and is read when the text changes, not followed.
 */
export function useLiveFields(
  sources: FieldSources,
  saved: FieldSources,
  data: Record<string, unknown>,
  options: { enabled: boolean; delayMs?: number },
): Field[] | null {
  const { enabled, delayMs = 600 } = options;
  const [fields, setFields] = useState<Field[] | null>(null);
  const key = JSON.stringify(sources);
  const unchanged = key === JSON.stringify(saved);
  const dataRef = useRef(data);
  dataRef.current = data;

  useEffect(() => {
    if (!enabled || unchanged) {
      setFields(null);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      try {
        const page = {
          ...(sources.header_html.trim() ? { header_html: sources.header_html } : {}),
          ...(sources.footer_html.trim() ? { footer_html: sources.footer_html } : {}),
        };
        const body = { html: sources.html, css: sources.css || undefined, page, sample_data: dataRef.current };
        const answer = await api().json<{ fields: Field[] }>('POST', '/v1/templates/fields', {
          body,
          signal: controller.signal,
        });
        if (!controller.signal.aborted) setFields(answer.fields);
      } catch {
        // A syntax error (shown by the preview), a rate limit or no such route: the form keeps the fields it has.
      }
    }, delayMs);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
    // `key` stands for `sources`.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, unchanged, enabled, delayMs]);

  return fields;
}

/**
 * When the followed fields change, a top-level key of the sample data no field uses leaves it (and with
 * it the saved sample data and the snippets); it comes back with its value if a field uses it again.
 * Not while the JSON pane holds text that does not parse, and not for data that is itself an e-invoice
 * (the e-invoice starter's: Run sends all of it as the invoice).
 */
export function useDataFollowsFields(
  fields: Field[] | null,
  draft: { data: DataObject; setData(data: DataObject): void; jsonError: string | null },
): void {
  const dropped = useRef<DataObject>({});
  useEffect(() => {
    const { data } = draft;
    if (!fields || draft.jsonError || looksLikeInvoice(data)) return;
    const used = new Set(fields.map((f) => f.key.split('.')[0]));
    const back = Object.fromEntries(Object.entries(dropped.current).filter(([key]) => used.has(key) && !(key in data)));
    for (const key of Object.keys(back)) delete dropped.current[key];
    const { data: kept, dropped: gone } = keepUsedKeys({ ...data, ...back }, fields);
    Object.assign(dropped.current, gone);
    if (Object.keys(back).length > 0 || Object.keys(gone).length > 0) draft.setData(kept);
    // Only a change of the fields prunes: data typed in the form or the JSON pane is the user's.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [fields]);
}
