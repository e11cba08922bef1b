/** The live preview: the latest good PDF in an iframe (blob: URL), with its status and problems. */
import { describeProblem } from '../../lib/problems.js';
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

export function PreviewPane({ preview }: { preview: PreviewState }) {
  const stale = preview.status !== 'ready' && preview.url;
  return (
    <section class="panel preview" aria-labelledby="preview-title">
      <div class="panel-head">
        <h2 id="preview-title">Preview</h2>
        <span class={`preview-status preview-${preview.status}`} role="status" data-testid="preview-status" data-status={preview.status}>
          {STATUS_TEXT[preview.status]}
          {preview.status === 'ready' && preview.renderedAt ? ` (${preview.renderedAt.toLocaleTimeString()})` : ''}
        </span>
        {preview.url && (
          <a class="button button-small" href={preview.url} target="_blank" rel="noopener">
            Open in new tab
          </a>
        )}
      </div>
      <p class="help">Free and stamped “PREVIEW”; previews have their own per-minute limit. Use Run for the real document.</p>
      {preview.message && preview.status !== 'ready' && (
        <p class={`notice ${preview.status === 'error' ? 'notice-error' : 'notice-warning'}`} role={preview.status === 'error' ? 'alert' : 'status'}>
          {preview.problems.length ? preview.problems.map(describeProblem).join(' ') : preview.message}
        </p>
      )}
      {preview.warningCount > 0 && (
        <div class="notice notice-warning" data-testid="preview-warnings">
          <p>
            {preview.warningCount === 1 ? 'One thing' : `${preview.warningCount} things`} in this document did not come out as written:
          </p>
          <ul>
            {preview.warnings.map((w, i) => (
              <li key={i}>
                <code>{w.code}</code> {w.message}
                {w.url && (
                  <>
                    {' '}
                    (<span class="warning-url">{w.url}</span>)
                  </>
                )}
              </li>
            ))}
            {preview.warningCount > preview.warnings.length && <li>and {preview.warningCount - preview.warnings.length} more.</li>}
          </ul>
        </div>
      )}
      <div class={`preview-frame ${stale ? 'preview-stale' : ''}`}>
        {preview.url ? (
          <iframe title="PDF preview" src={preview.url} data-testid="preview-frame" data-preview-url={preview.url} data-preview-version={preview.version} />
        ) : (
          <div class="preview-empty">{preview.status === 'error' ? 'No preview yet: fix the problem above.' : 'The PDF appears here.'}</div>
        )}
      </div>
    </section>
  );
}
