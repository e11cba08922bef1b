/**
 * A saved template previewed as a PDF: `POST /v1/templates/preview` (free, stamped PREVIEW) with its id,
 * an optional version and the data, shown in a frame with its status, what the document needed and did
 * not get, and a close button (a version in the editor, row 1 of a batch). One at a time: asking for
 * another aborts the one in flight.
 *
 * States: closed → rendering → ready | error (→ rendering on the next request, closed on Close).
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api/session.js';
import { describeWarning } from '../lib/messages.js';
import { parseWarningHeaders, type DocumentWarning } from '../lib/warnings.js';
import { ErrorNotice } from './notice.js';

export interface PdfPreviewState<S> {
  /** What is previewed (a version, a batch's chosen version), as the caller named it. */
  subject: S;
  status: 'rendering' | 'ready' | 'error';
  /** blob: URL of the PDF once ready. */
  url: string | null;
  message: string | null;
  warnings: DocumentWarning[];
}

export interface PreviewRequest {
  template_id: string;
  version?: number;
  data: Record<string, unknown>;
}

/** The open preview (or null) and the calls that open and close it; `describeError` words a refusal. */
export function usePdfPreview<S>(describeError: (error: unknown) => string) {
  const [state, setState] = useState<PdfPreviewState<S> | null>(null);
  const controller = useRef<AbortController | null>(null);
  const urlRef = useRef<string | null>(null);

  const release = () => {
    controller.current?.abort();
    controller.current = null;
    if (urlRef.current) URL.revokeObjectURL(urlRef.current);
    urlRef.current = null;
  };
  useEffect(() => release, []);

  const show = async (subject: S, body: PreviewRequest) => {
    release();
    const mine = new AbortController();
    controller.current = mine;
    setState({ subject, status: 'rendering', url: null, message: null, warnings: [] });
    try {
      const response = await api().raw('POST', '/v1/templates/preview', { body, signal: mine.signal });
      const blob = await response.blob();
      if (mine.signal.aborted) return;
      urlRef.current = URL.createObjectURL(new Blob([blob], { type: 'application/pdf' }));
      setState({
        subject,
        status: 'ready',
        url: urlRef.current,
        message: null,
        warnings: parseWarningHeaders((name) => response.headers.get(name)).warnings,
      });
    } catch (error) {
      if (mine.signal.aborted || (error as Error).name === 'AbortError') return;
      setState({ subject, status: 'error', url: null, message: describeError(error), warnings: [] });
    }
  };

  const close = () => {
    release();
    setState(null);
  };

  return { state, show, close };
}

interface PdfPreviewPanelProps {
  state: PdfPreviewState<unknown>;
  /** The heading ("Preview of version 2 (v2)"); the frame is titled "PDF preview of …" after `name`. */
  name: string;
  /** Prefix of the panel's test ids and heading id (`version-preview` → `version-preview-status`). */
  testId: string;
  /** Shown above the render's warnings; without it they are not listed. */
  warningsIntro?: ComponentChildren;
  onClose(): void;
}

export function PdfPreviewPanel({ state, name, testId, warningsIntro, onClose }: PdfPreviewPanelProps) {
  return (
    <section class="version-preview" aria-labelledby={`${testId}-title`}>
      <div class="panel-head">
        <h3 id={`${testId}-title`}>Preview of {name}</h3>
        <span
          class={`preview-status preview-${state.status}`}
          role="status"
          data-testid={`${testId}-status`}
          data-status={state.status}
        >
          {state.status === 'rendering' ? 'Rendering…' : state.status === 'ready' ? 'Ready.' : 'Preview failed.'}
        </span>
        {state.url && (
          <a class="button button-small" href={state.url} target="_blank" rel="noopener">
            Open in new tab
          </a>
        )}
        <button type="button" class="button button-small" onClick={onClose}>
          Close preview
        </button>
      </div>
      <ErrorNotice>{state.message}</ErrorNotice>
      {warningsIntro && state.warnings.length > 0 && (
        <div class="notice notice-warning" data-testid={`${testId}-warnings`}>
          <p>{warningsIntro}</p>
          <ul>
            {state.warnings.map((w, i) => (
              <li key={i} title={w.code}>
                {describeWarning(w).text}
              </li>
            ))}
          </ul>
        </div>
      )}
      {state.url && (
        <div class="preview-frame version-preview-frame">
          <iframe title={`PDF preview of ${name}`} src={state.url} data-testid={`${testId}-frame`} />
        </div>
      )}
    </section>
  );
}
