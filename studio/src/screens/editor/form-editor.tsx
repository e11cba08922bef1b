/**
 * The editor of a fillable PDF form template (kind `pdf_form`, docs/pdf-forms.md): no text panes or page
 * setup — the PDF is the layout and the studio cannot edit it — but a panel saying so, listing the form's
 * fields with their kinds, with Replace PDF (PUT pdf_base64: a new draft, its fields read again). The
 * data form is generated from the fields as for any template; the preview is the saved form filled with
 * that data (POST /v1/templates/preview with template_id: free, stamped); Run fills it for real, without
 * the options a form refuses. Save keeps the name and the sample data.
 */
import { useCallback, useMemo, useState } from 'preact/hooks';
import { api, useSession } from '../../api/session.js';
import { describeRefusal } from '../../api/client.js';
import type { Field, Template, TemplateVersion } from '../../lib/api-types.js';
import {
  addMark,
  fieldInputId,
  formPlace,
  isEditedSince,
  type FieldMark,
  type Refusal,
} from '../../lib/field-marks.js';
import { missingRequired } from '../../lib/form-data.js';
import { CodeEditor } from '../../components/code-editor.js';
import { FileDrop } from '../../components/drop-zone.js';
import { ErrorNotice } from '../../components/notice.js';
import { TabPanel, Tabs } from '../../components/tabs.js';
import { useLoad } from '../../components/use-load.js';
import { EditorBar } from './editor-bar.js';
import { formFileProblem } from '../create-template-dialog.js';
import { readAsBase64 } from '../finishing/read-file.js';
import { DataForm } from './data-form.js';
import { PreviewPane } from './preview-pane.js';
import { RunPanel } from './run-panel.js';
import { usePreview } from './use-preview.js';
import { useTemplateDraft } from './use-template-draft.js';

type DataTab = 'form' | 'json';

/** A form field's kind as its form has it: text, number, checkbox, choice (with its options) or a list of several. */
export function formFieldKind(field: Field): string {
  if (field.type === 'boolean') return 'Checkbox';
  if (field.type === 'array') return 'List (several of the options)';
  if (field.options?.length) return 'Choice';
  if (field.type === 'number' || field.type === 'integer') return 'Number';
  return 'Text';
}

const NO_TEXTS = { html: '', css: '', header_html: '', footer_html: '' };

export function FormTemplateEditor({ template }: { template: Template }) {
  const accountId = useSession().account?.account_id ?? null;
  const t = useTemplateDraft(template, accountId);
  const draft = t.draft!;
  const [dataTab, setDataTab] = useState<DataTab>('form');
  const [savedNotice, setSavedNotice] = useState(false);
  const [runVersion, setRunVersion] = useState<number | null>(null);
  const versions = useLoad(
    async () =>
      (
        await api().json<{ versions: TemplateVersion[] }>(
          'GET',
          `/v1/templates/${encodeURIComponent(template.id)}/versions`,
        )
      ).versions,
    [template.id],
  );
  const saved = t.saved ?? template;
  const fields = saved.fields;

  // Number inputs whose text is not a number: refused, never dropped (as in the HTML editor).
  const [invalidInputs, setInvalidInputs] = useState<Record<string, string>>({});
  const reportInput = useCallback((id: string, label: string | null) => {
    setInvalidInputs((current) => {
      if ((current[id] ?? null) === label) return current;
      const next = { ...current };
      if (label === null) delete next[id];
      else next[id] = label;
      return next;
    });
  }, []);
  const invalidLabels = Object.values(invalidInputs);
  const inputsProblem = invalidLabels.length ? `${invalidLabels.join(', ')}: not a number` : null;

  // The PDF is the saved one (it is never unsaved): the preview fills it with the data as it is in the
  // form. Only template_id and data are sent; `css` holds the saved revision, so a new PDF previews again.
  const previewInput = useMemo(
    () => ({ html: '', css: saved.updated_at, page: {}, data: t.data, strict: false, templateId: template.id }),
    [t.data, template.id, saved.updated_at],
  );
  const preview = usePreview(previewInput, {
    pausedReason: t.jsonError
      ? 'Preview paused: the sample data is not valid JSON.'
      : inputsProblem
        ? `Preview paused: ${inputsProblem}.`
        : null,
  });

  const missing = useMemo(() => missingRequired(fields, t.data), [fields, t.data]);
  const [refusals, setRefusals] = useState<Refusal[]>([]);
  const marks = useMemo(() => {
    const all = new Map<string, FieldMark[]>();
    for (const field of missing)
      addMark(all, fieldInputId(field.key), {
        tone: 'warning',
        message:
          'Required by the form: Run refuses the data without it (nothing charged); the preview leaves it blank.',
      });
    for (const refusal of refusals) {
      const place = isEditedSince(refusal, t.data) ? null : formPlace(fields, refusal.loc);
      if (place?.id) addMark(all, place.id, { tone: 'error', message: refusal.message });
    }
    return all;
  }, [missing, refusals, fields, t.data]);
  const fieldLabel = useCallback((key: string) => fields.find((f) => f.key === key)?.label, [fields]);

  const save = async () => {
    setSavedNotice(false);
    const ok = await t.save();
    setSavedNotice(ok);
  };

  return (
    <main class="screen editor-screen" id="main">
      <h1 class="visually-hidden" tabIndex={-1}>
        Edit form template {saved.name}
      </h1>
      <div class="editor-bar">
        <EditorBar
          templateId={template.id}
          name={draft.name}
          onName={(name) => t.update({ name })}
          saving={t.saving}
          dirty={t.dirty}
          savedNotice={savedNotice}
          onSave={save}
        />
      </div>
      {t.saveError && (
        <div class="notice notice-error" role="alert" data-testid="save-error">
          <p>{t.saveError}</p>
        </div>
      )}
      <div class="editor-grid">
        <div class="editor-main">
          <FormPdfPanel template={saved} onReplaced={t.replacedPdf} />
          <section class="panel" id="editor-data-section" aria-labelledby="editor-data-title">
            <div class="panel-head">
              <h2 id="editor-data-title" tabIndex={-1}>
                Data
              </h2>
              <span class="muted">The form follows the PDF's fields.</span>
            </div>
            <Tabs<DataTab>
              idPrefix="data"
              label="Data"
              selected={dataTab}
              onSelect={setDataTab}
              tabs={[
                { id: 'form', label: 'Form' },
                { id: 'json', label: 'JSON', ...(t.jsonError ? { badge: '!', badgeLabel: 'invalid JSON' } : {}) },
              ]}
            />
            <TabPanel idPrefix="data" id="form" selected={dataTab === 'form'}>
              <DataForm
                fields={fields}
                data={t.data}
                onChange={t.setData}
                onInputValidity={reportInput}
                marks={marks}
              />
            </TabPanel>
            <TabPanel idPrefix="data" id="json" selected={dataTab === 'json'} class="code-panel">
              <CodeEditor
                id="editor-sample-data"
                label="Sample data (JSON)"
                language="json"
                value={t.jsonText}
                onChange={t.setJson}
                problems={[]}
              />
              {t.jsonError && <ErrorNotice>{t.jsonError}</ErrorNotice>}
            </TabPanel>
          </section>
        </div>
        <div class="editor-side">
          <PreviewPane preview={preview} fieldLabel={fieldLabel} />
          <RunPanel
            templateId={template.id}
            templateName={saved.name}
            strict={false}
            data={t.data}
            fields={fields}
            inputsProblem={inputsProblem}
            templateDirty={t.templateDirty}
            versions={versions.data ?? []}
            version={runVersion}
            onVersion={setRunVersion}
            onRefused={setRefusals}
            savedTexts={NO_TEXTS}
            onTemplateProblems={() => undefined}
            onShowField={(loc) => {
              const place = formPlace(fields, loc);
              setDataTab('form');
              if (place?.id) requestAnimationFrame(() => document.getElementById(place.id!)?.focus());
            }}
            canShowField={(loc) => formPlace(fields, loc)?.id != null}
            formTemplate
          />
        </div>
      </div>
    </main>
  );
}

/** What the template is, its fields with their kinds, and Replace PDF. */
function FormPdfPanel({ template, onReplaced }: { template: Template; onReplaced(next: Template): void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [replaced, setReplaced] = useState<string | null>(null);
  const form = template.form;

  const replace = async (files: File[]) => {
    const file = files[0];
    if (!file) return;
    setError(null);
    setReplaced(null);
    const problem = formFileProblem(file);
    if (problem) {
      setError(problem);
      return;
    }
    setBusy(true);
    try {
      const next = await api().json<Template>('PUT', `/v1/templates/${encodeURIComponent(template.id)}`, {
        body: { pdf_base64: await readAsBase64(file) },
      });
      onReplaced(next);
      setReplaced(`Replaced by ${file.name}: ${next.fields.length} field${next.fields.length === 1 ? '' : 's'}.`);
    } catch (refused) {
      setError(describeRefusal(refused, (loc) => (loc[0] === 'pdf_base64' ? `The PDF (${file.name})` : null)));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel form-pdf" id="template-section" aria-labelledby="form-pdf-title">
      <div class="panel-head">
        <h2 id="form-pdf-title" tabIndex={-1}>
          Fillable PDF form
        </h2>
        {form && (
          <span class="muted" data-testid="form-facts">
            {form.pages} page{form.pages === 1 ? '' : 's'}, {form.fields} field{form.fields === 1 ? '' : 's'},{' '}
            {Math.max(1, Math.round(form.bytes / 1024))} KB
          </span>
        )}
      </div>
      <p data-testid="form-explainer">
        A fillable PDF form: its fields come from the PDF, and each document is the form filled with the data (flattened
        by default). The studio cannot edit the PDF itself — upload a new one to change it — nor, yet, the fields'
        labels and help texts (the API can: docs/pdf-forms.md).
      </p>
      <table class="table responsive-table" data-testid="form-fields">
        <caption class="visually-hidden">The form's fields</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Kind</th>
            <th scope="col">Required</th>
          </tr>
        </thead>
        <tbody>
          {template.fields.map((f) => (
            <tr key={f.key} data-testid="form-field" data-key={f.key}>
              <td data-label="Field">
                {f.label}
                {f.label !== f.key && (
                  <>
                    {' '}
                    <code class="muted">{f.key}</code>
                  </>
                )}
              </td>
              <td data-label="Kind" data-testid="form-field-kind">
                <span>
                  {formFieldKind(f)}
                  {f.options?.length ? <span class="muted">: {f.options.map((o) => `“${o}”`).join(', ')}</span> : null}
                </span>
              </td>
              <td data-label="Required">{f.required ? 'Required' : 'Optional'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <FileDrop
        id="replace-form-pdf"
        label="Replace PDF"
        accept="application/pdf,.pdf"
        testId="replace-form-pdf-drop"
        onFiles={(files) => void replace(files)}
        prompt="To change the form, drop its new PDF here (a new draft: published versions keep theirs), or"
        button={busy ? 'Replacing…' : 'Replace PDF…'}
      />
      {replaced && (
        <p class="notice notice-success" role="status" data-testid="replace-done">
          {replaced}
        </p>
      )}
      {error && (
        <div class="notice notice-error" role="alert" data-testid="replace-error">
          <p>Not replaced: {error}</p>
        </div>
      )}
    </section>
  );
}
