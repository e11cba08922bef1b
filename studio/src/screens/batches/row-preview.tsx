/**
 * Row 1 of a batch as a document (../../components/pdf-preview.tsx): the template's id, the chosen
 * version if any, and the row's data, with what the document needed and did not get.
 */
import { describeRefusal } from '../../api/client.js';
import { PdfPreviewPanel, usePdfPreview, type PdfPreviewState } from '../../components/pdf-preview.js';

export type RowPreviewState = PdfPreviewState<number | undefined>;

export function useRowPreview() {
  const preview = usePdfPreview<number | undefined>((error) =>
    describeRefusal(error, (loc) => (loc[0] === 'data' && loc[1] !== undefined ? `Row 1, ${String(loc[1])}` : null)),
  );
  const show = (templateId: string, data: Record<string, unknown>, version?: number) =>
    preview.show(version, { template_id: templateId, data, ...(version ? { version } : {}) });
  return { state: preview.state, show, close: preview.close };
}

export function RowPreview({ state, onClose }: { state: RowPreviewState; onClose(): void }) {
  return (
    <PdfPreviewPanel
      state={state}
      name="row 1"
      testId="row-preview"
      warningsIntro="Row 1's document did not come out quite as written:"
      onClose={onClose}
    />
  );
}
