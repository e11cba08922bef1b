/**
 * The template editor: text panes and page setup on the left with the data (generated form, JSON,
 * fields) and the versions below them; the live preview and Run on the right (stacked on a phone).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../../api/session.js';
import type { Template, TemplateVersion } from '../../lib/api-types.js';
import type { TemplateSnapshot } from '../../lib/template-diff.js';
import { describeProblem, type Problem } from '../../lib/problems.js';
import { CodeEditor } from '../../components/code-editor.js';
import { ErrorNotice } from '../../components/notice.js';
import { TabPanel, Tabs } from '../../components/tabs.js';
import { useLoad } from '../../components/use-load.js';
import { Link, paths } from '../../router.js';
import { DataForm } from './data-form.js';
import { FieldsEditor } from './fields-editor.js';
import { PreviewPane } from './preview-pane.js';
import { RunPanel } from './run-panel.js';
import { TemplatePanes, type TemplateTab } from './template-panes.js';
import { usePreview } from './use-preview.js';
import { invalidMargins, pageOf, useTemplateDraft } from './use-template-draft.js';
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
  const draftSnapshot: TemplateSnapshot = useMemo(() => ({ html: draft.html, css: draft.css, page: pageOf(draft), sample_data: t.data }), [draft, t.data]);

  const runThisVersion = (v: TemplateVersion) => {
    setRunVersion(v.version_number);
    requestAnimationFrame(() => document.getElementById('run-template')?.focus());
  };

  const marginsInvalid = invalidMargins(draft).length > 0;
  const previewInput = useMemo(() => ({ html: draft.html, css: draft.css, page: pageOf(draft), data: t.data }), [draft, t.data]);
  const preview = usePreview(previewInput, {
    pausedReason: t.jsonError ? 'Preview paused: the sample data is not valid JSON.' : marginsInvalid ? 'Preview paused: a margin is not a CSS length.' : null,
  });

  useEffect(() => {
    if (preview.status === 'ready') t.clearCodeProblems();
  }, [preview.version]);

  const problems: Problem[] = useMemo(() => [...t.problems, ...preview.problems], [t.problems, preview.problems]);

  const save = async () => {
    setSavedNotice(false);
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
      {t.saveError && (
        <div class="notice notice-error" role="alert" data-testid="save-error">
          <p>{t.saveError}</p>
          {t.problems.length > 0 && (
            <ul>
              {t.problems.map((p, i) => (
                <li key={i}>{describeProblem(p)}</li>
              ))}
            </ul>
          )}
        </div>
      )}
      <div class="editor-grid">
        <div class="editor-main">
          <TemplatePanes draft={draft} update={t.update} problems={problems} selected={templateTab} onSelect={setTemplateTab} />
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
              <DataForm fields={fields} data={t.data} onChange={t.setData} />
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
          <RunPanel templateId={template.id} data={t.data} fields={fields} templateDirty={t.templateDirty} versions={versions.data ?? []} version={runVersion} onVersion={setRunVersion} />
        </div>
      </div>
    </main>
  );
}
