/**
 * The live preview: the latest good PDF in an iframe (blob: URL), with its status and problems, and
 * what it needed and did not get. An image template's preview frame has its canvas's shape.
 */
import { describeProblem } from '../../lib/problems.js';
import { describeWarning } from '../../lib/messages.js';
import type { DocumentWarning } from '../../lib/warnings.js';
import { Link } from '../../router.js';
import type { PreviewState } from './use-preview.js';

const STATUS_TEXT: Record<PreviewState['status'], string> = {
  idle: 'Preview starts when the template loads.',
  waiting: 'Waiting for you to stop typing…',
  rendering: 'Rendering preview…',
  ready: 'Preview up to date.',
  error: 'Preview failed.',
  rate_limited: 'Preview paused (rate limit).',
  paused: 'Preview paused.',
};

interface PreviewPaneProps {
  preview: PreviewState;
  /** An image template's canvas: the frame takes its shape, and the PDF viewer fits the page in it. */
  canvas?: { width: number; height: number } | null;
  /** Warnings the studio found itself (a required field without a value, by the service's rule). */
  extraWarnings?: DocumentWarning[];
  /** A field's label by its key, to name a field as the form does. */
  fieldLabel?(key: string): string | undefined;
}

export function PreviewPane({ preview, canvas = null, extraWarnings = [], fieldLabel }: PreviewPaneProps) {
  const stale = preview.status !== 'ready' && preview.url;
  // The warnings belong to the PDF shown; once a newer preview failed they describe an older text.
  const failed = preview.status === 'error' && preview.refusal === null;
  const warnings = failed ? [] : [...extraWarnings, ...preview.warnings];
  const warningCount = failed ? 0 : extraWarnings.length + preview.warningCount;
  // Chromium's viewer: no toolbar, the whole page in view (the frame has the canvas's shape).
  const src = preview.url && canvas ? `${preview.url}#toolbar=0&view=Fit` : preview.url;
  return (
    <section class="panel preview" id="preview-section" aria-labelledby="preview-title">
      <div class="panel-head">
        <h2 id="preview-title" tabIndex={-1}>
          Preview
        </h2>
        <span
          class={`preview-status preview-${preview.status}`}
          role="status"
          data-testid="preview-status"
          data-status={preview.status}
        >
          {preview.status === 'error' && preview.refusal
            ? 'Data refused: a required field is empty.'
            : STATUS_TEXT[preview.status]}
          {preview.status === 'ready' && preview.renderedAt ? ` (${preview.renderedAt.toLocaleTimeString()})` : ''}
        </span>
        {preview.url && (
          <a class="button button-small" href={preview.url} target="_blank" rel="noopener">
            Open in new tab
          </a>
        )}
      </div>
      <p class="help">
        {canvas
          ? `The canvas (${canvas.width} × ${canvas.height} px) as a page: free and stamped “PREVIEW”. Render image makes the image itself.`
          : 'Free and stamped “PREVIEW”; previews have their own per-minute limit. Use Run for the real document.'}
      </p>
      {preview.refusal && (
        <p class="notice notice-error" role="alert" data-testid="preview-refusal">
          {preview.refusal}
        </p>
      )}
      {preview.message && preview.status !== 'ready' && (
        <p
          class={`notice ${preview.status === 'error' ? 'notice-error' : 'notice-warning'}`}
          role={preview.status === 'error' ? 'alert' : 'status'}
          data-testid="preview-message"
        >
          {preview.problems.length ? preview.problems.map(describeProblem).join(' ') : preview.message}
        </p>
      )}
      {warningCount > 0 && (
        <div class="notice notice-warning" data-testid="preview-warnings">
          <p>
            {warningCount === 1 ? 'One thing' : `${warningCount} things`} in this document did not come out as written:
          </p>
          <ul>
            {warnings.map((w, i) => {
              const said = describeWarning(w, fieldLabel);
              return (
                <li key={i} data-code={w.code} title={w.code}>
                  {said.text}
                  {said.link && (
                    <>
                      {' '}
                      <Link href={said.link.href}>{said.link.label}</Link>
                    </>
                  )}
                  {said.url && (
                    <>
                      {' '}
                      (<span class="warning-url">{said.url}</span>)
                    </>
                  )}
                </li>
              );
            })}
            {warningCount > warnings.length && <li>and {warningCount - warnings.length} more.</li>}
          </ul>
        </div>
      )}
      <div
        class={`preview-frame ${canvas ? 'preview-canvas' : ''} ${stale ? 'preview-stale' : ''}`}
        style={
          canvas
            ? {
                aspectRatio: `${canvas.width} / ${canvas.height}`,
                width: `min(100%, calc(70vh * ${canvas.width} / ${canvas.height}))`,
              }
            : undefined
        }
        data-testid="preview-box"
      >
        {preview.url ? (
          <iframe
            title="PDF preview"
            src={src ?? undefined}
            data-testid="preview-frame"
            data-preview-url={preview.url}
            data-preview-version={preview.version}
          />
        ) : (
          <div class="preview-empty">
            {preview.status === 'error' ? 'No preview yet: fix the problem above.' : 'The PDF appears here.'}
          </div>
        )}
      </div>
    </section>
  );
}
