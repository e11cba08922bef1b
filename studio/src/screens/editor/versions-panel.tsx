/**
 * Versions: publish the saved template as a tagged, immutable version; list, retag, describe and delete
 * versions; preview one, hand one to Run, and compare two (or one with the draft). No credits, except
 * what Run itself costs.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api/session.js';
import type { TemplateVersion } from '../../lib/api-types.js';
import { formatTime, isVersionTag, VERSION_TAG_RULE_TEXT } from '../../lib/format.js';
import type { DataObject } from '../../lib/form-data.js';
import type { TemplateSnapshot } from '../../lib/template-diff.js';
import { confirmAction } from '../../components/confirm-dialog.js';
import { ErrorNotice, StatusNotice } from '../../components/notice.js';
import { VersionDiff } from './version-diff.js';
import { useVersionPreview, VersionPreview } from './version-preview.js';

interface Props {
  templateId: string;
  versions: TemplateVersion[] | undefined;
  loadError: string | null;
  reload(): Promise<void>;
  /** The template's text, page setup or name differ from what is saved (a version copies the saved one). */
  templateDirty: boolean;
  draft: TemplateSnapshot;
  data: DataObject;
  /** Selects this version in Run and brings Run into view. */
  onRun(version: TemplateVersion): void;
}

const label = (v: TemplateVersion) => `version ${v.version_number} (${v.tag})`;

/** The inline message for a tag field, or null when it is fine (an empty field is only flagged once submitted). */
function tagProblem(tag: string, submitted: boolean): string | null {
  if (tag === '') return submitted ? 'A tag is required.' : null;
  return isVersionTag(tag) ? null : `Not a valid tag: ${VERSION_TAG_RULE_TEXT}.`;
}

export function VersionsPanel({ templateId, versions, loadError, reload, templateDirty, draft, data, onRun }: Props) {
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState<number | null>(null);
  const preview = useVersionPreview(templateId);
  const base = `/v1/templates/${encodeURIComponent(templateId)}/versions`;

  /**
   * Runs one call; its success message or the API's error shows in the panel. Resolves true on success.
   * The message shows once the list is reloaded, in the same turn as the caller's own reset (the
   * publish form clears its fields): a tag typed after the message appears is never cleared under it.
   */
  const act = async (call: () => Promise<string | null>): Promise<boolean> => {
    setBusy(true);
    setMessage(null);
    setError(null);
    try {
      const done = await call();
      await reload();
      if (done) setMessage(done);
      return true;
    } catch (e) {
      setError((e as Error).message);
      return false;
    } finally {
      setBusy(false);
    }
  };

  const publish = (tag: string, description: string) =>
    act(async () => {
      const v = await api().json<TemplateVersion>('POST', base, {
        body: { tag, ...(description.trim() ? { description: description.trim() } : {}) },
      });
      return `Published ${label(v)}.`;
    });

  const update = (v: TemplateVersion, tag: string, description: string) =>
    act(async () => {
      const changes = {
        ...(tag !== v.tag ? { tag } : {}),
        ...(description.trim() !== (v.description ?? '') ? { description: description.trim() || null } : {}),
      };
      if (Object.keys(changes).length > 0) await api().json('PATCH', `${base}/${v.version_number}`, { body: changes });
      setEditing(null);
      return `Version ${v.version_number} saved.`;
    });

  const remove = async (v: TemplateVersion) => {
    const ok = await confirmAction({
      title: 'Delete version?',
      message: `Version ${v.version_number} (“${v.tag}”) will be deleted. Calls and queued jobs that name it will fail with VERSION_NOT_FOUND; its number is not given out again.`,
      confirmLabel: 'Delete version',
      danger: true,
    });
    if (!ok) return;
    if (preview.state?.subject.version_number === v.version_number) preview.close();
    await act(async () => {
      await api().json('DELETE', `${base}/${v.version_number}`);
      return `Deleted ${label(v)}.`;
    });
  };

  return (
    <section class="panel versions" id="versions-section" aria-labelledby="versions-title">
      <div class="panel-head">
        <h2 id="versions-title" tabIndex={-1}>
          Versions
        </h2>
        {versions && <span class="muted">{versions.length === 0 ? 'None yet' : `${versions.length} saved`}</span>}
      </div>
      <p class="help">
        A version is a frozen copy of the saved template under a tag, with the asset files it uses as they were when it
        was published. Calls that pass <code>version</code> (a tag or a number) render it; editing the draft or
        uploading a new file under an asset's name never changes it.
      </p>
      <PublishForm busy={busy} templateDirty={templateDirty} onPublish={publish} />
      <ErrorNotice>{error ?? loadError}</ErrorNotice>
      {message && <StatusNotice tone="success">{message}</StatusNotice>}
      {versions && versions.length > 0 && (
        <table class="table responsive-table versions-table">
          <caption class="visually-hidden">Versions of this template</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Tag</th>
              <th scope="col">Description</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {versions.map((v) =>
              editing === v.version_number ? (
                <EditVersionRow
                  key={v.version_number}
                  version={v}
                  busy={busy}
                  onSave={(tag, description) => update(v, tag, description)}
                  onCancel={() => setEditing(null)}
                />
              ) : (
                <tr key={v.version_number}>
                  <td data-label="Version">{v.version_number}</td>
                  <td data-label="Tag">
                    <code>{v.tag}</code>
                  </td>
                  <td data-label="Description">{v.description ?? <span class="muted">—</span>}</td>
                  <td data-label="Created">{formatTime(v.created_at)}</td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="button button-small"
                      onClick={() => preview.show(v, data)}
                      aria-label={`Preview version ${v.version_number}`}
                    >
                      Preview
                    </button>
                    <button
                      type="button"
                      class="button button-small"
                      onClick={() => onRun(v)}
                      aria-label={`Run version ${v.version_number}`}
                    >
                      Run
                    </button>
                    <button
                      type="button"
                      class="button button-small"
                      onClick={() => setEditing(v.version_number)}
                      aria-label={`Edit version ${v.version_number}`}
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      class="button button-small button-danger-quiet"
                      onClick={() => remove(v)}
                      aria-label={`Delete version ${v.version_number}`}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      )}
      {preview.state && <VersionPreview state={preview.state} onClose={preview.close} />}
      {versions && <VersionDiff templateId={templateId} versions={versions} draft={draft} />}
    </section>
  );
}

function PublishForm({
  busy,
  templateDirty,
  onPublish,
}: {
  busy: boolean;
  templateDirty: boolean;
  onPublish(tag: string, description: string): Promise<boolean>;
}) {
  const [tag, setTag] = useState('');
  const [description, setDescription] = useState('');
  const [submitted, setSubmitted] = useState(false);
  const problem = tagProblem(tag, submitted);

  const submit = async (event: Event) => {
    event.preventDefault();
    setSubmitted(true);
    if (tagProblem(tag, true)) return;
    if (await onPublish(tag, description)) {
      setTag('');
      setDescription('');
      setSubmitted(false);
    }
  };

  return (
    <form class="publish-form" onSubmit={submit} noValidate>
      <div class="form-row">
        {/* The message stays outside the label, so the field's name stays "Tag". */}
        <div class="field">
          <label class="field-label" for="publish-tag">
            Tag
          </label>
          <input
            id="publish-tag"
            value={tag}
            onInput={(e) => setTag(e.currentTarget.value)}
            placeholder="prod"
            maxLength={50}
            spellcheck={false}
            autoCapitalize="off"
            aria-invalid={problem ? true : undefined}
            aria-describedby="publish-tag-error"
          />
          <span class="field-error" id="publish-tag-error" role={problem ? 'alert' : undefined}>
            {problem}
          </span>
        </div>
        <label class="field">
          <span class="field-label">Description (optional)</span>
          <input
            value={description}
            onInput={(e) => setDescription(e.currentTarget.value)}
            maxLength={500}
            placeholder="What changed"
          />
        </label>
      </div>
      {templateDirty && (
        <p class="notice notice-warning">
          Unsaved changes: a version copies the saved template. Save first to include your latest edits.
        </p>
      )}
      <button type="submit" class="button button-primary" disabled={busy || !!problem}>
        Publish version
      </button>
    </form>
  );
}

function EditVersionRow({
  version,
  busy,
  onSave,
  onCancel,
}: {
  version: TemplateVersion;
  busy: boolean;
  onSave(tag: string, description: string): void;
  onCancel(): void;
}) {
  const [tag, setTag] = useState(version.tag);
  const [description, setDescription] = useState(version.description ?? '');
  const problem = tagProblem(tag, true);
  const n = version.version_number;
  return (
    <tr>
      <td colSpan={5}>
        <form
          class="edit-version"
          onSubmit={(e) => (e.preventDefault(), !problem && onSave(tag, description))}
          onKeyDown={(e) => e.key === 'Escape' && onCancel()}
          noValidate
        >
          <div class="form-row">
            <div class="field">
              <label class="field-label" for={`edit-tag-${n}`}>
                Tag of version {n}
              </label>
              <input
                id={`edit-tag-${n}`}
                value={tag}
                onInput={(e) => setTag(e.currentTarget.value)}
                maxLength={50}
                spellcheck={false}
                autoCapitalize="off"
                aria-invalid={problem ? true : undefined}
                aria-describedby={`edit-tag-error-${n}`}
                autoFocus
              />
              <span class="field-error" id={`edit-tag-error-${n}`}>
                {problem}
              </span>
            </div>
            <label class="field">
              <span class="field-label">Description of version {n}</span>
              <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} maxLength={500} />
            </label>
          </div>
          <div class="button-row">
            <button type="submit" class="button button-small button-primary" disabled={busy || !!problem}>
              Save version {n}
            </button>
            <button type="button" class="button button-small" onClick={onCancel}>
              Cancel
            </button>
          </div>
        </form>
      </td>
    </tr>
  );
}
