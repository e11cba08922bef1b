/**
 * The template editor: text panes and page setup on the left with the data (generated form, JSON,
 * fields) and the versions below them; the live preview and Run on the right (stacked on a phone).
 * An image template has a canvas instead of a page setup, and Render image (layers, modifications,
 * format, width) instead of Run.
 */
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../../api/session.js';
import type { Template, TemplateVersion } from '../../lib/api-types.js';
import type { TemplateSnapshot } from '../../lib/template-diff.js';
import { describeProblem, isStale, type Problem } from '../../lib/problems.js';
import { CodeEditor } from '../../components/code-editor.js';
import { ErrorNotice } from '../../components/notice.js';
import { TabPanel, Tabs } from '../../components/tabs.js';
import { useLoad } from '../../components/use-load.js';
import { Link, paths } from '../../router.js';
import { DataForm } from './data-form.js';
import { FieldsEditor } from './fields-editor.js';
import { ImagePanel } from './image-panel.js';
import { PreviewPane } from './preview-pane.js';
import { RunPanel } from './run-panel.js';
import { TemplatePanes, type TemplateTab } from './template-panes.js';
import { usePreview } from './use-preview.js';
import { invalidMargins, pageOf, paneSources, paperProblem, useTemplateDraft } from './use-template-draft.js';
import { VersionsPanel } from './versions-panel.js';

type DataTab = 'form' | 'json' | 'fields';

export function EditorScreen({ templateId }: { templateId: string }) {
  const loaded = useLoad(() => api().json<Template>('GET', `/v1/templates/${encodeURIComponent(templateId)}`), [templateId]);
  if (loaded.error) {
    return (
      <main class="screen" id="main">
        <h1 tabIndex={-1}>Template not available</h1>
        <ErrorNotice>{loaded.error.message}</ErrorNotice>
        <Link href={paths.templates}>Back to templates</Link>
      </main>
    );
  }
  if (!loaded.data) {
    return (
      <main class="screen" id="main">
        <p class="muted">Loading template…</p>
      </main>
    );
  }
  return <Editor template={loaded.data} />;
}

function Editor({ template }: { template: Template }) {
  const t = useTemplateDraft(template);
  const [templateTab, setTemplateTab] = useState<TemplateTab>('html');
  const [dataTab, setDataTab] = useState<DataTab>('form');
  const [savedNotice, setSavedNotice] = useState(false);
  const draft = t.draft!;
  const versions = useLoad(async () => (await api().json<{ versions: TemplateVersion[] }>('GET', `/v1/templates/${encodeURIComponent(template.id)}/versions`)).versions, [template.id]);
  const [runVersion, setRunVersion] = useState<number | null>(null);
  const draftSnapshot: TemplateSnapshot = useMemo(() => ({ html: draft.html, css: draft.css, page: pageOf(draft), sample_data: t.data, strict: draft.strict }), [draft, t.data]);

  const runThisVersion = (v: TemplateVersion) => {
    setRunVersion(v.version_number);
    requestAnimationFrame(() => document.getElementById('run-template')?.focus());
  };

  // Number inputs of the form whose text is not a number (keyed by input id → field label): refused, never dropped.
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

  const marginsInvalid = invalidMargins(draft).length > 0;
  const paper = paperProblem(draft);
  const previewInput = useMemo(() => ({ html: draft.html, css: draft.css, page: pageOf(draft), data: t.data, strict: draft.strict }), [draft, t.data]);
  const preview = usePreview(previewInput, {
    pausedReason: t.jsonError
      ? 'Preview paused: the sample data is not valid JSON.'
      : marginsInvalid
        ? 'Preview paused: a margin is not a CSS length.'
        : paper
          ? `Preview paused: ${paper.message}`
          : inputsProblem
            ? `Preview paused: ${inputsProblem}.`
            : null,
  });

  useEffect(() => {
    if (preview.status === 'ready') t.clearCodeProblems();
  }, [preview.version]);

  const problems: Problem[] = useMemo(() => [...t.problems, ...preview.problems], [t.problems, preview.problems]);
  // The save's problems that still apply: one whose pane has changed since may be fixed, and is not listed.
  const current = useMemo(() => paneSources(draft, t.data), [draft, t.data]);
  const openSaveProblems = t.problems.filter((p) => !isStale(p, current));
  const [inputsRefused, setInputsRefused] = useState(false);

  const save = async () => {
    setSavedNotice(false);
    setInputsRefused(!!inputsProblem);
    if (inputsProblem) return;
    setSavedNotice(await t.save());
  };

  // After a failed save, show the first pane with a problem so its marker is visible.
  useEffect(() => {
    const first = t.problems[0];
    if (!first) return;
    if (first.pane === 'html' || first.pane === 'css' || first.pane === 'header_html' || first.pane === 'footer_html' || first.pane === 'page') setTemplateTab(first.pane);
    else if (first.pane === 'sample_data') setDataTab('json');
    else if (first.pane === 'fields') setDataTab('fields');
  }, [t.problems]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 's') {
        event.preventDefault();
        void save();
      }
    };
    const onUnload = (event: BeforeUnloadEvent) => {
      if (t.dirty) event.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    window.addEventListener('beforeunload', onUnload);
    return () => {
      window.removeEventListener('keydown', onKey);
      window.removeEventListener('beforeunload', onUnload);
    };
  });

  const fields = t.saved?.fields ?? [];
  const jsonProblems = useMemo(() => (t.jsonError ? [{ message: t.jsonError, line: Number(/line (\d+)/.exec(t.jsonError)?.[1]) || undefined }] : []), [t.jsonError]);

  return (
    <main class="screen editor-screen" id="main">
      <h1 class="visually-hidden" tabIndex={-1}>
        Edit template {t.saved?.name}
      </h1>
      <div class="editor-bar">
        <Link href={paths.templates} class="back-link">
          ← Templates
        </Link>
        <label class="field field-inline editor-name">
          <span class="field-label">Name</span>
          <input value={draft.name} onInput={(e) => t.update({ name: e.currentTarget.value })} maxLength={200} />
        </label>
        <code class="muted" title="Template id">
          {template.id}
        </code>
        <span class="save-state" role="status" data-testid="save-state">
          {t.saving ? 'Saving…' : t.dirty ? 'Unsaved changes' : savedNotice ? 'Saved' : 'All changes saved'}
        </span>
        <button type="button" class="button button-primary" onClick={save} disabled={t.saving} aria-keyshortcuts="Control+S">
          Save
        </button>
      </div>
      {inputsRefused && inputsProblem && (
        <div class="notice notice-error" role="alert" data-testid="save-error">
          <p>Not saved: {inputsProblem}. Fix the form's highlighted fields.</p>
        </div>
      )}
      {t.saveError && (
        <div class="notice notice-error" role="alert" data-testid="save-error">
          <p>{t.saveError}</p>
        </div>
      )}
      {t.refusedForProblems && openSaveProblems.length > 0 && (
        <div class="notice notice-error" role="alert" data-testid="save-error">
          <p>Not saved: {openSaveProblems.length === 1 ? 'one problem' : `${openSaveProblems.length} problems`} to fix.</p>
          <ul>
            {openSaveProblems.map((p, i) => (
              <li key={i}>{describeProblem(p)}</li>
            ))}
          </ul>
        </div>
      )}
      {t.refusedForProblems && openSaveProblems.length === 0 && t.dirty && (
        <div class="notice notice-info" role="status" data-testid="save-fixed">
          <p>Problems fixed. Not saved yet: press Save to keep your changes.</p>
        </div>
      )}
      <div class="editor-grid">
        <div class="editor-main">
          <TemplatePanes draft={draft} update={t.update} problems={problems} selected={templateTab} onSelect={setTemplateTab} kind={template.kind} />
          <section class="panel" aria-labelledby="data-title">
            <div class="panel-head">
              <h2 id="data-title">Data</h2>
              {t.dirty && fields.length > 0 && <span class="muted">Fields follow the template when you save.</span>}
            </div>
            <Tabs<DataTab>
              idPrefix="data"
              label="Data"
              selected={dataTab}
              onSelect={setDataTab}
              tabs={[
                { id: 'form', label: 'Form' },
                { id: 'json', label: 'JSON', ...(t.jsonError ? { badge: '!', badgeLabel: 'invalid JSON' } : {}) },
                { id: 'fields', label: `Fields (${fields.length})` },
              ]}
            />
            <TabPanel idPrefix="data" id="form" selected={dataTab === 'form'}>
              <DataForm fields={fields} data={t.data} onChange={t.setData} onInputValidity={reportInput} />
            </TabPanel>
            <TabPanel idPrefix="data" id="json" selected={dataTab === 'json'} class="code-panel">
              <CodeEditor id="editor-sample-data" label="Sample data (JSON)" language="json" value={t.jsonText} onChange={t.setJson} problems={jsonProblems} />
              {t.jsonError && <ErrorNotice>{t.jsonError}</ErrorNotice>}
            </TabPanel>
            <TabPanel idPrefix="data" id="fields" selected={dataTab === 'fields'}>
              <FieldsEditor fields={fields} inferred={t.saved?.fields_inferred ?? true} saving={t.saving} onSave={t.saveFields} />
            </TabPanel>
          </section>
          <VersionsPanel
            templateId={template.id}
            versions={versions.data}
            loadError={versions.error?.message ?? null}
            reload={versions.reload}
            templateDirty={t.templateDirty}
            draft={draftSnapshot}
            data={t.data}
            onRun={runThisVersion}
          />
        </div>
        <div class="editor-side">
          <PreviewPane preview={preview} />
          {template.kind === 'image' ? (
            <ImagePanel
              templateId={template.id}
              canvas={t.saved?.canvas ?? template.canvas}
              data={t.data}
              templateDirty={t.templateDirty}
              revision={t.saved?.updated_at ?? template.updated_at}
              versions={versions.data ?? []}
              version={runVersion}
              onVersion={setRunVersion}
            />
          ) : (
            <RunPanel templateId={template.id} data={t.data} fields={fields} inputsProblem={inputsProblem} templateDirty={t.templateDirty} versions={versions.data ?? []} version={runVersion} onVersion={setRunVersion} />
          )}
        </div>
      </div>
    </main>
  );
}
