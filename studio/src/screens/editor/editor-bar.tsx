/**
 * The editor's top row, one for both editors (an HTML template's and a form template's): back to the
 * templates, the name, the id, whether the draft is saved, what else the editor says there, and Save.
 */
import type { ComponentChildren } from 'preact';
import { Link, paths } from '../../router.js';

export interface EditorBarProps {
  templateId: string;
  name: string;
  onName(name: string): void;
  saving: boolean;
  dirty: boolean;
  /** A save just ended well ("Saved" rather than "All changes saved"). */
  savedNotice: boolean;
  onSave(): void;
  /** The editor saves on Ctrl+S (announced to assistive technology on the button). */
  saveShortcut?: boolean;
  /** Shown between the save state and Save (the HTML editor's local copy). */
  children?: ComponentChildren;
}

export function EditorBar(p: EditorBarProps) {
  return (
    <div class="editor-bar-row">
      <Link href={paths.templates} class="back-link">
        ← Templates
      </Link>
      <label class="field field-inline editor-name">
        <span class="field-label">Name</span>
        <input value={p.name} onInput={(e) => p.onName(e.currentTarget.value)} maxLength={200} />
      </label>
      <code class="muted template-id" title="Template id">
        {p.templateId}
      </code>
      <span class="save-state" role="status" data-testid="save-state">
        {p.saving ? 'Saving…' : p.dirty ? 'Unsaved changes' : p.savedNotice ? 'Saved' : 'All changes saved'}
      </span>
      {p.children}
      <button
        type="button"
        class="button button-primary"
        onClick={p.onSave}
        disabled={p.saving}
        aria-keyshortcuts={p.saveShortcut ? 'Control+S' : undefined}
      >
        Save
      </button>
    </div>
  );
}
