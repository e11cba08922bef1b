/** Templates: list with search and a kind filter (PDF / image); create, open, duplicate, rename and delete. */
import { useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../api/session.js';
import type { Template, TemplateKind, TemplateSummary } from '../lib/api-types.js';
import { formatTime } from '../lib/format.js';
import { PDF_STARTERS, STARTER_IMAGE_CSS, STARTER_IMAGE_DATA, STARTER_IMAGE_HTML } from '../lib/starter-template.js';
import { confirmAction } from '../components/confirm-dialog.js';
import { ErrorNotice, StatusNotice } from '../components/notice.js';
import { useLoad } from '../components/use-load.js';
import { Link, navigate, paths } from '../router.js';
import { CreateTemplateDialog, type NewTemplate } from './create-template-dialog.js';
import { readAsBase64 } from './finishing/read-file.js';

// The kind filter is the API's own (`?kind=`), so the list is what a client asking for one kind gets.
const listTemplates = async (kind: TemplateKind | '') =>
  (await api().json<{ templates: TemplateSummary[] }>('GET', '/v1/templates', { query: { kind } })).templates;

const KIND_LABELS: Record<TemplateKind, string> = { pdf: 'PDF', image: 'Image', pdf_form: 'PDF form' };

export function TemplatesScreen() {
  const [kind, setKind] = useState<TemplateKind | ''>('');
  const templates = useLoad(() => listTemplates(kind), [kind]);
  const [query, setQuery] = useState('');
  const [creating, setCreating] = useState(false);
  const [renaming, setRenaming] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    const list = templates.data ?? [];
    return q ? list.filter((t) => t.name.toLowerCase().includes(q) || t.id.toLowerCase().includes(q)) : list;
  }, [templates.data, query]);

  const run = async (action: () => Promise<string | void>) => {
    setError(null);
    setMessage(null);
    try {
      const done = await action();
      if (done) setMessage(done);
      await templates.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const create = async ({ name, kind: newKind, canvas, starter: starterId, pdf }: NewTemplate) => {
    // A form template's refusal (about its PDF) is the dialog's to say: it is thrown, not shown here.
    if (newKind === 'pdf_form' && pdf) {
      const body = { name, kind: 'pdf_form', pdf_base64: await readAsBase64(pdf) };
      const created = await api().json<Template>('POST', '/v1/templates', { body });
      setCreating(false);
      navigate(paths.editor(created.id));
      return;
    }
    return run(async () => {
      const starter = PDF_STARTERS.find((s) => s.id === starterId) ?? PDF_STARTERS[0]!;
      const body =
        newKind === 'image'
          ? {
              name,
              kind: 'image',
              canvas,
              html: STARTER_IMAGE_HTML,
              css: STARTER_IMAGE_CSS,
              sample_data: STARTER_IMAGE_DATA,
            }
          : { name, html: starter.html, css: starter.css, sample_data: starter.sample_data, page: starter.page };
      const created = await api().json<Template>('POST', '/v1/templates', { body });
      setCreating(false);
      navigate(paths.editor(created.id));
    });
  };

  const duplicate = (summary: TemplateSummary) =>
    run(async () => {
      const t = await api().json<Template>('GET', `/v1/templates/${summary.id}`);
      const copy = await api().json<Template>('POST', '/v1/templates', {
        body: {
          name: `${t.name} (copy)`.slice(0, 200),
          html: t.html,
          css: t.css,
          sample_data: t.sample_data,
          ...(t.kind === 'image' ? { kind: 'image', canvas: t.canvas } : { page: t.page }),
          ...(t.fields_inferred ? {} : { fields: t.fields }),
          ...(t.strict ? { strict: true } : {}),
        },
      });
      return `Duplicated as “${copy.name}”.`;
    });

  const rename = (summary: TemplateSummary, name: string) =>
    run(async () => {
      setRenaming(null);
      if (!name.trim() || name === summary.name) return;
      await api().json('PUT', `/v1/templates/${summary.id}`, { body: { name: name.trim() } });
      return `Renamed to “${name.trim()}”.`;
    });

  const remove = (summary: TemplateSummary) =>
    run(async () => {
      const ok = await confirmAction({
        title: 'Delete template?',
        message: `“${summary.name}” (${summary.id}) will be deleted. Generations that use its id will fail.`,
        confirmLabel: 'Delete',
        danger: true,
      });
      if (!ok) return;
      await api().json('DELETE', `/v1/templates/${summary.id}`);
      return `Deleted “${summary.name}”.`;
    });

  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>Templates</h1>
        <button type="button" class="button button-primary" onClick={() => setCreating(true)}>
          New template
        </button>
      </div>
      <div class="toolbar">
        <label class="field field-inline">
          <span class="field-label">Search</span>
          <input
            type="search"
            value={query}
            onInput={(e) => setQuery(e.currentTarget.value)}
            placeholder="Name or id"
          />
        </label>
        <div class="field field-inline">
          <label class="field-label" for="template-kind-filter">
            Kind
          </label>
          <select
            id="template-kind-filter"
            value={kind}
            onChange={(e) => setKind(e.currentTarget.value as TemplateKind | '')}
          >
            <option value="">All</option>
            <option value="pdf">PDF</option>
            <option value="image">Image</option>
            <option value="pdf_form">PDF form</option>
          </select>
        </div>
        <span class="muted" aria-live="polite">
          {templates.data ? `${shown.length} of ${templates.data.length}` : ''}
        </span>
      </div>
      <ErrorNotice>{error ?? templates.error?.message}</ErrorNotice>
      {message && <StatusNotice tone="success">{message}</StatusNotice>}
      {templates.loading && !templates.data && <p class="muted">Loading templates…</p>}
      {templates.data && templates.data.length === 0 && (
        <p class="empty">
          {kind
            ? `No ${KIND_LABELS[kind]} templates.`
            : 'No templates yet. Create one to start: it opens with a small invoice example.'}
        </p>
      )}
      {shown.length > 0 && (
        <table class="table responsive-table">
          <caption class="visually-hidden">Your templates</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Id</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((t) => (
              <tr key={t.id}>
                <td data-label="Name">
                  {renaming === t.id ? (
                    <RenameInput summary={t} onDone={(name) => rename(t, name)} onCancel={() => setRenaming(null)} />
                  ) : (
                    <Link href={paths.editor(t.id)}>{t.name}</Link>
                  )}
                </td>
                <td data-label="Kind">{KIND_LABELS[t.kind] ?? t.kind}</td>
                <td data-label="Id">
                  <code>{t.id}</code>
                </td>
                <td data-label="Updated">{formatTime(t.updated_at)}</td>
                <td class="row-actions">
                  <button
                    type="button"
                    class="button button-small"
                    onClick={() => setRenaming(t.id)}
                    aria-label={`Rename ${t.name}`}
                  >
                    Rename
                  </button>
                  {/* A form template's PDF is not read back by the API: a copy is made by uploading it again. */}
                  {t.kind !== 'pdf_form' && (
                    <button
                      type="button"
                      class="button button-small"
                      onClick={() => duplicate(t)}
                      aria-label={`Duplicate ${t.name}`}
                    >
                      Duplicate
                    </button>
                  )}
                  <button
                    type="button"
                    class="button button-small button-danger-quiet"
                    onClick={() => remove(t)}
                    aria-label={`Delete ${t.name}`}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CreateTemplateDialog open={creating} onCreate={create} onClose={() => setCreating(false)} />
    </main>
  );
}

function RenameInput({
  summary,
  onDone,
  onCancel,
}: {
  summary: TemplateSummary;
  onDone(name: string): void;
  onCancel(): void;
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <form class="inline-form" onSubmit={(e) => (e.preventDefault(), onDone(input.current?.value ?? ''))}>
      <label class="visually-hidden" for={`rename-${summary.id}`}>
        New name for {summary.name}
      </label>
      <input
        id={`rename-${summary.id}`}
        ref={input}
        defaultValue={summary.name}
        maxLength={200}
        autoFocus
        onKeyDown={(e) => e.key === 'Escape' && onCancel()}
      />
      <button type="submit" class="button button-small button-primary">
        Save
      </button>
      <button type="button" class="button button-small" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}
