/** The "New template" dialog: a name, then the editor opens on the starter example. */
import { useEffect, useRef, useState } from 'preact/hooks';

export function CreateTemplateDialog({ open, onCreate, onClose }: { open: boolean; onCreate(name: string): Promise<void>; onClose(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) {
      setName('');
      d.showModal();
    } else if (!open && d.open) d.close();
  }, [open]);

  return (
    <dialog ref={dialog} class="dialog" aria-labelledby="create-title" onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!name.trim()) return;
          setBusy(true);
          try {
            await onCreate(name.trim());
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
        <p class="help">It starts as a small invoice example you can edit.</p>
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="button button-primary" disabled={busy || !name.trim()}>
            {busy ? 'Creating…' : 'Create'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
