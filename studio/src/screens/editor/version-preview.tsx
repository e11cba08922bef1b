/**
 * A preview of one saved version (../../components/pdf-preview.tsx): the server renders that snapshot
 * with the form's data.
 */
import { PdfPreviewPanel, usePdfPreview, type PdfPreviewState } from '../../components/pdf-preview.js';
import type { TemplateVersion } from '../../lib/api-types.js';
import type { DataObject } from '../../lib/form-data.js';

export type VersionPreviewState = PdfPreviewState<TemplateVersion>;

/** The open preview (or null) and the calls that open and close it. */
export function useVersionPreview(templateId: string) {
  const preview = usePdfPreview<TemplateVersion>((error) => (error as Error).message);
  const show = (version: TemplateVersion, data: DataObject) =>
    preview.show(version, { template_id: templateId, version: version.version_number, data });
  return { state: preview.state, show, close: preview.close };
}

export function VersionPreview({ state, onClose }: { state: VersionPreviewState; onClose(): void }) {
  return (
    <PdfPreviewPanel
      state={state}
      name={`version ${state.subject.version_number} (${state.subject.tag})`}
      testId="version-preview"
      onClose={onClose}
    />
  );
}
