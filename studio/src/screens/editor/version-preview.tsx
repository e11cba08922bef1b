/**
 * A preview of one saved version: `POST /v1/templates/preview` with `template_id` and `version`, so the
 * server renders that snapshot (free, stamped PREVIEW) with the form's data. One at a time: asking for
 * another aborts the one in flight.
 *
 * States: closed → rendering → ready | error (→ rendering on the next request, closed on Close).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api/session.js';
import type { TemplateVersion } from '../../lib/api-types.js';
import type { DataObject } from '../../lib/form-data.js';
import { ErrorNotice } from '../../components/notice.js';

export interface VersionPreviewState {
  version: TemplateVersion;
  status: 'rendering' | 'ready' | 'error';
  /** blob: URL of the PDF once ready. */
  url: string | null;
  message: string | null;
}

/** The open preview (or null) and the calls that open and close it. */
export function useVersionPreview(templateId: string) {
  const [state, setState] = useState<VersionPreviewState | null>(null);
  const controller = useRef<AbortController | null>(null);
  const urlRef = useRef<string | null>(null);

  const release = () => {
    controller.current?.abort();
    controller.current = null;
    if (urlRef.current) URL.revokeObjectURL(urlRef.current);
    urlRef.current = null;
  };
  useEffect(() => release, []);

  const show = async (version: TemplateVersion, data: DataObject) => {
    release();
    const mine = new AbortController();
    controller.current = mine;
    setState({ version, status: 'rendering', url: null, message: null });
    try {
      const body = { template_id: templateId, version: version.version_number, data };
      const response = await api().raw('POST', '/v1/templates/preview', { body, signal: mine.signal });
      const blob = await response.blob();
      if (mine.signal.aborted) return;
      urlRef.current = URL.createObjectURL(new Blob([blob], { type: 'application/pdf' }));
      setState({ version, status: 'ready', url: urlRef.current, message: null });
    } catch (error) {
      if (mine.signal.aborted || (error as Error).name === 'AbortError') return;
      setState({ version, status: 'error', url: null, message: (error as Error).message });
    }
  };

  const close = () => {
    release();
    setState(null);
  };

  return { state, show, close };
}

export function VersionPreview({ state, onClose }: { state: VersionPreviewState; onClose(): void }) {
  const name = `version ${state.version.version_number} (${state.version.tag})`;
  return (
    <section class="version-preview" aria-labelledby="version-preview-title">
      <div class="panel-head">
        <h3 id="version-preview-title">Preview of {name}</h3>
        <span class={`preview-status preview-${state.status}`} role="status" data-testid="version-preview-status" data-status={state.status}>
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
      {state.url && (
        <div class="preview-frame version-preview-frame">
          <iframe title={`PDF preview of ${name}`} src={state.url} data-testid="version-preview-frame" />
        </div>
      )}
    </section>
  );
}
