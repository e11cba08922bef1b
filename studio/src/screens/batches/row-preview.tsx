/**
 * Row 1 of a batch as a document: `POST /v1/templates/preview` with the template's id (and version, when
 * one is chosen) and the row's data (free, stamped PREVIEW), shown as the editor shows a version's
 * preview, with what the document needed and did not get. One at a time: a new request aborts the one in flight.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeRefusal } from '../../api/client.js';
import { api } from '../../api/session.js';
import { describeWarning } from '../../lib/messages.js';
import { parseWarningHeaders, type DocumentWarning } from '../../lib/warnings.js';
import { ErrorNotice } from '../../components/notice.js';

export interface RowPreviewState {
  status: 'rendering' | 'ready' | 'error';
  /** blob: URL of the PDF once ready. */
  url: string | null;
  message: string | null;
  warnings: DocumentWarning[];
}

export function useRowPreview() {
  const [state, setState] = useState<RowPreviewState | null>(null);
  const controller = useRef<AbortController | null>(null);
  const urlRef = useRef<string | null>(null);

  const release = () => {
    controller.current?.abort();
    controller.current = null;
    if (urlRef.current) URL.revokeObjectURL(urlRef.current);
    urlRef.current = null;
  };
  useEffect(() => release, []);

  const show = async (templateId: string, data: Record<string, unknown>, version?: number) => {
    release();
    const mine = new AbortController();
    controller.current = mine;
    setState({ status: 'rendering', url: null, message: null, warnings: [] });
    try {
      const response = await api().raw('POST', '/v1/templates/preview', { body: { template_id: templateId, data, ...(version ? { version } : {}) }, signal: mine.signal });
      const blob = await response.blob();
      if (mine.signal.aborted) return;
      urlRef.current = URL.createObjectURL(new Blob([blob], { type: 'application/pdf' }));
      setState({ status: 'ready', url: urlRef.current, message: null, warnings: parseWarningHeaders((name) => response.headers.get(name)).warnings });
    } catch (error) {
      if (mine.signal.aborted || (error as Error).name === 'AbortError') return;
      setState({ status: 'error', url: null, message: describeRefusal(error, (loc) => (loc[0] === 'data' && loc[1] !== undefined ? `Row 1, ${String(loc[1])}` : null)), warnings: [] });
    }
  };

  const close = () => {
    release();
    setState(null);
  };

  return { state, show, close };
}

export function RowPreview({ state, onClose }: { state: RowPreviewState; onClose(): void }) {
  return (
    <section class="version-preview" aria-labelledby="row-preview-title">
      <div class="panel-head">
        <h3 id="row-preview-title">Preview of row 1</h3>
        <span class={`preview-status preview-${state.status}`} role="status" data-testid="row-preview-status" data-status={state.status}>
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
      {state.warnings.length > 0 && (
        <div class="notice notice-warning" data-testid="row-preview-warnings">
          <p>Row 1's document did not come out quite as written:</p>
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
          <iframe title="PDF preview of row 1" src={state.url} data-testid="row-preview-frame" />
        </div>
      )}
    </section>
  );
}
