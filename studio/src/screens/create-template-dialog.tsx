/**
 * The "New template" dialog: a name and a kind (PDF, with a choice of starters; image with a canvas
 * size; or a fillable PDF form, dropped or picked), then the editor opens on the new template. A form
 * the service refuses (no fields, encrypted, not a PDF…) is said here, in the dialog, and nothing is made.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeRefusal } from '../api/client.js';
import { FileDrop } from '../components/drop-zone.js';
import type { Canvas, TemplateKind } from '../lib/api-types.js';
import { DEFAULT_CANVAS, PDF_STARTERS, type PdfStarterId } from '../lib/starter-template.js';

export interface NewTemplate {
  name: string;
  kind: TemplateKind;
  /** Image templates only. */
  canvas?: Canvas;
  /** PDF templates only: what it starts as. */
  starter?: PdfStarterId;
  /** Form templates only: the fillable PDF. */
  pdf?: File;
}

/** The service's bound for a form template's PDF (docs/pdf-forms.md). */
export const FORM_PDF_MAX_BYTES = 3_000_000;

/** Why a picked file cannot be a form template before it is sent, or null. */
export function formFileProblem(file: File): string | null {
  if (file.size > FORM_PDF_MAX_BYTES)
    return `${file.name} is ${(file.size / 1_000_000).toFixed(1)} MB; a form template's PDF is at most 3 MB.`;
  if (file.size === 0) return `${file.name} is empty.`;
  return null;
}

const CANVAS_MIN = 16;
const CANVAS_MAX = 5000;
const canvasSideValid = (n: number) => Number.isInteger(n) && n >= CANVAS_MIN && n <= CANVAS_MAX;

export function CreateTemplateDialog({
  open,
  onCreate,
  onClose,
}: {
  open: boolean;
  onCreate(template: NewTemplate): Promise<void>;
  onClose(): void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [name, setName] = useState('');
  const [kind, setKind] = useState<TemplateKind>('pdf');
  const [starter, setStarter] = useState<PdfStarterId>('example');
  const [width, setWidth] = useState(String(DEFAULT_CANVAS.width));
  const [height, setHeight] = useState(String(DEFAULT_CANVAS.height));
  const [busy, setBusy] = useState(false);
  const [pdf, setPdf] = useState<File | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) {
      setName('');
      setKind('pdf');
      setStarter('example');
      setWidth(String(DEFAULT_CANVAS.width));
      setHeight(String(DEFAULT_CANVAS.height));
      setPdf(null);
      setError(null);
      d.showModal();
    } else if (!open && d.open) d.close();
  }, [open]);

  const canvasInvalid = kind === 'image' && !(canvasSideValid(Number(width)) && canvasSideValid(Number(height)));
  const isForm = kind === 'pdf_form';
  const fileProblem = isForm && pdf ? formFileProblem(pdf) : null;
  const formIncomplete = isForm && (!pdf || !!fileProblem);

  const pick = (files: File[]) => {
    const file = files[0];
    if (!file) return;
    setPdf(file);
    setError(null);
    // The file's name is a fair start for the template's.
    if (!name.trim()) setName(file.name.replace(/\.pdf$/i, '').slice(0, 200));
  };

  return (
    <dialog ref={dialog} class="dialog" aria-labelledby="create-title" onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!name.trim() || canvasInvalid || formIncomplete) return;
          setBusy(true);
          setError(null);
          try {
            await onCreate({
              name: name.trim(),
              kind,
              ...(kind === 'image'
                ? { canvas: { width: Number(width), height: Number(height) } }
                : isForm
                  ? { pdf: pdf! }
                  : { starter }),
            });
          } catch (refused) {
            // A form template's refusal is about the PDF: said here, where it can be replaced.
            setError(
              describeRefusal(refused, (loc) => (loc[0] === 'pdf_base64' ? `The PDF (${pdf?.name ?? 'file'})` : null)),
            );
          } finally {
            setBusy(false);
          }
        }}
      >
        <h2 id="create-title">New template</h2>
        <label class="field">
          <span class="field-label">Template name</span>
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} maxLength={200} required autoFocus />
        </label>
        <fieldset class="radio-group">
          <legend class="field-label">Kind</legend>
          <label class="radio">
            <input type="radio" name="template-kind" checked={kind === 'pdf'} onChange={() => setKind('pdf')} />
            PDF document
          </label>
          <label class="radio">
            <input type="radio" name="template-kind" checked={kind === 'image'} onChange={() => setKind('image')} />
            Image
          </label>
          <label class="radio">
            <input
              type="radio"
              name="template-kind"
              checked={kind === 'pdf_form'}
              onChange={() => setKind('pdf_form')}
            />
            Fillable PDF form
          </label>
        </fieldset>
        {kind === 'pdf' && (
          <fieldset class="radio-group">
            <legend class="field-label">Start from</legend>
            {PDF_STARTERS.map((s) => (
              <label key={s.id} class="radio">
                <input
                  type="radio"
                  name="template-starter"
                  checked={starter === s.id}
                  onChange={() => setStarter(s.id)}
                />
                {s.label}
              </label>
            ))}
          </fieldset>
        )}
        {kind === 'image' && (
          <div class="form-row">
            <label class="field">
              <span class="field-label">Canvas width (px)</span>
              <input
                type="number"
                min={CANVAS_MIN}
                max={CANVAS_MAX}
                value={width}
                onInput={(e) => setWidth(e.currentTarget.value)}
                required
              />
            </label>
            <label class="field">
              <span class="field-label">Canvas height (px)</span>
              <input
                type="number"
                min={CANVAS_MIN}
                max={CANVAS_MAX}
                value={height}
                onInput={(e) => setHeight(e.currentTarget.value)}
                required
              />
            </label>
          </div>
        )}
        {isForm && (
          <div class="form-file">
            <FileDrop
              id="create-form-pdf"
              label="Form PDF file"
              accept="application/pdf,.pdf"
              testId="form-pdf-drop"
              onFiles={pick}
              prompt={pdf ? 'Drop another PDF here to replace it, or' : 'Drop a fillable PDF here, or'}
              button={pdf ? 'Choose another PDF…' : 'Choose a PDF…'}
            />
            {pdf && (
              <p class="muted" data-testid="form-pdf-chosen">
                {pdf.name} ({Math.max(1, Math.round(pdf.size / 1024))} KB)
              </p>
            )}
            {fileProblem && <p class="field-error">{fileProblem}</p>}
          </div>
        )}
        {error && (
          <div class="notice notice-error" role="alert" data-testid="create-error">
            <p>Not created: {error}</p>
          </div>
        )}
        {canvasInvalid && (
          <p class="field-error">
            Each side of the canvas is a whole number of pixels from {CANVAS_MIN} to {CANVAS_MAX}.
          </p>
        )}
        <p class="help">
          {kind === 'image'
            ? 'It starts as a card whose headline and subtitle are layers you can change per image.'
            : isForm
              ? 'A PDF with form fields (an AcroForm): its fields become the template’s, and each document is the form filled from the data. At most 3 MB; not encrypted or signed.'
              : PDF_STARTERS.find((s) => s.id === starter)?.help}
        </p>
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="submit"
            class="button button-primary"
            disabled={busy || !name.trim() || canvasInvalid || formIncomplete}
          >
            {busy ? 'Creating…' : 'Create'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
