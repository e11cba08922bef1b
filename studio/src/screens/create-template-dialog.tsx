/**
 * The "New template" dialog: a name and a kind (PDF, with a choice of starters, or image with a canvas
 * size), then the editor opens on the starter.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Canvas, TemplateKind } from '../lib/api-types.js';
import { DEFAULT_CANVAS, PDF_STARTERS, type PdfStarterId } from '../lib/starter-template.js';

export interface NewTemplate {
  name: string;
  kind: TemplateKind;
  /** Image templates only. */
  canvas?: Canvas;
  /** PDF templates only: what it starts as. */
  starter?: PdfStarterId;
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

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) {
      setName('');
      setKind('pdf');
      setStarter('example');
      setWidth(String(DEFAULT_CANVAS.width));
      setHeight(String(DEFAULT_CANVAS.height));
      d.showModal();
    } else if (!open && d.open) d.close();
  }, [open]);

  const canvasInvalid = kind === 'image' && !(canvasSideValid(Number(width)) && canvasSideValid(Number(height)));

  return (
    <dialog ref={dialog} class="dialog" aria-labelledby="create-title" onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!name.trim() || canvasInvalid) return;
          setBusy(true);
          try {
            await onCreate({
              name: name.trim(),
              kind,
              ...(kind === 'image' ? { canvas: { width: Number(width), height: Number(height) } } : { starter }),
            });
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
        {canvasInvalid && (
          <p class="field-error">
            Each side of the canvas is a whole number of pixels from {CANVAS_MIN} to {CANVAS_MAX}.
          </p>
        )}
        <p class="help">
          {kind === 'image'
            ? 'It starts as a card whose headline and subtitle are layers you can change per image.'
            : PDF_STARTERS.find((s) => s.id === starter)?.help}
        </p>
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="button button-primary" disabled={busy || !name.trim() || canvasInvalid}>
            {busy ? 'Creating…' : 'Create'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
