/**
 * The template editor: text panes and page setup on the left with the data (generated form, JSON,
 * fields) and the versions below them; the live preview and Run on the right (stacked on a phone). A
 * sticky bar keeps Save and a list of the sections in reach on a long page.
 * An image template has a canvas instead of a page setup, and Render image (layers, modifications,
 * format, width) instead of Run; its preview is a page of the canvas's size.
 * One verdict on the data: a required field without a value (the service's own rule) is marked in the
 * form, and in strict mode the preview fails as Run would; Run's refusals are marked at their fields.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, useSession } from '../../api/session.js';
import type { Template, TemplateVersion } from '../../lib/api-types.js';
import type { TemplateSnapshot } from '../../lib/template-diff.js';
import { describeProblem, isStale, type Problem } from '../../lib/problems.js';
import { canvasPage } from '../../lib/api-types.js';
import { readableFields } from '../../lib/field-labels.js';
import {
  addMark,
  fieldInputId,
  formPlace,
  isEditedSince,
  type DataLoc,
  type FieldMark,
  type Refusal,
} from '../../lib/field-marks.js';
import { missingRequired, missingRequiredWarnings } from '../../lib/form-data.js';
import { formatTime } from '../../lib/format.js';
import { CodeEditor } from '../../components/code-editor.js';
import { ErrorNotice } from '../../components/notice.js';
import { TabPanel, Tabs } from '../../components/tabs.js';
import { useLoad } from '../../components/use-load.js';
import { Link, paths, setNavigationGuard } from '../../router.js';
import { EditorBar } from './editor-bar.js';
import { chooseAction } from '../../components/confirm-dialog.js';
import { DataForm } from './data-form.js';
import { FieldsEditor } from './fields-editor.js';
import { FormTemplateEditor } from './form-editor.js';
import { ImagePanel } from './image-panel.js';
import { PreviewPane } from './preview-pane.js';
import { RunPanel } from './run-panel.js';
import { TemplatePanes, type TemplateTab } from './template-panes.js';
import { useDataFollowsFields, useLiveFields, usePreview } from './use-preview.js';
import {
  invalidCanvas,
  invalidMargins,
  pageOf,
  paneSources,
  paperProblem,
  useTemplateDraft,
} from './use-template-draft.js';
import { VersionsPanel } from './versions-panel.js';

type DataTab = 'form' | 'json' | 'fields';

export function EditorScreen({ templateId }: { templateId: string }) {
  const loaded = useLoad(
    () => api().json<Template>('GET', `/v1/templates/${encodeURIComponent(templateId)}`),
    [templateId],
  );
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
  // A fillable PDF form has no text to edit: its own editor (its fields, Replace PDF, the data, preview, Run).
  if (loaded.data.kind === 'pdf_form') return <FormTemplateEditor template={loaded.data} />;
  return <Editor template={loaded.data} />;
}

function Editor({ template }: { template: Template }) {
  const accountId = useSession().account?.account_id ?? null;
  const t = useTemplateDraft(template, accountId);
  const [templateTab, setTemplateTab] = useState<TemplateTab>('html');
  const [dataTab, setDataTab] = useState<DataTab>('form');
  const [savedNotice, setSavedNotice] = useState(false);
  const draft = t.draft!;
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
  const [runVersion, setRunVersion] = useState<number | null>(null);
  const draftSnapshot: TemplateSnapshot = useMemo(
    () => ({ html: draft.html, css: draft.css, page: pageOf(draft), sample_data: t.data, strict: draft.strict }),
    [draft, t.data],
  );

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

  const isImage = template.kind === 'image';
  const fields = t.saved?.fields ?? [];
  const inferred = t.saved?.fields_inferred ?? true;
  // Inferred fields follow the text as it is typed (the service infers them from the unsaved text); hand-set ones stay as set.
  const savedSources = useMemo(
    () => ({
      html: t.saved?.html ?? '',
      css: t.saved?.css ?? '',
      header_html: t.saved?.page?.header_html ?? '',
      footer_html: t.saved?.page?.footer_html ?? '',
    }),
    [t.saved],
  );
  const liveSources = useMemo(
    () => ({ html: draft.html, css: draft.css, header_html: draft.header_html, footer_html: draft.footer_html }),
    [draft.html, draft.css, draft.header_html, draft.footer_html],
  );
  const liveFields = useLiveFields(liveSources, savedSources, t.data, { enabled: inferred });
  // The form's fields, with readable labels when inferred: the form, its marks and the preview name them alike.
  const formFields = useMemo(
    () => readableFields(inferred && liveFields ? liveFields : fields, inferred),
    [fields, liveFields, inferred],
  );
  // Run renders the saved draft: its checks and the places its refusals name are the saved fields'.
  const runFields = useMemo(() => readableFields(fields, inferred), [fields, inferred]);

  useDataFollowsFields(liveFields, t);
  const missing = useMemo(() => missingRequired(formFields, t.data), [formFields, t.data]);
  // A strict template refuses data without a required value, at every door (the API's check runs on
  // saved templates only: the preview of unsaved text gets the same verdict here, before sending).
  const requiredRefusal =
    draft.strict && missing.length > 0
      ? `${missing.map((f) => f.label).join(', ')}: required, and empty. Strict mode refuses the data without ${missing.length === 1 ? 'it' : 'them'}, here and in Run (nothing is charged). Fill ${missing.length === 1 ? 'it' : 'them'} in the form.`
      : null;

  const marginsInvalid = !isImage && invalidMargins(draft).length > 0;
  const paper = isImage ? null : paperProblem(draft);
  const canvasInvalid = isImage && invalidCanvas(draft).length > 0;
  // An image template previews on a page of its canvas (as it is typed, while valid): the image's shape.
  const canvasWidth = canvasInvalid ? (t.saved?.canvas?.width ?? 1080) : Number(draft.canvas_width);
  const canvasHeight = canvasInvalid ? (t.saved?.canvas?.height ?? 1080) : Number(draft.canvas_height);
  const previewCanvas = isImage ? { width: canvasWidth, height: canvasHeight } : null;
  const previewPage = useMemo(
    () => (isImage ? canvasPage({ width: canvasWidth, height: canvasHeight }) : pageOf(draft)),
    [isImage, canvasWidth, canvasHeight, draft],
  );
  const previewInput = useMemo(
    () => ({ html: draft.html, css: draft.css, page: previewPage, data: t.data, strict: draft.strict }),
    [draft.html, draft.css, previewPage, t.data, draft.strict],
  );
  const preview = usePreview(previewInput, {
    pausedReason: t.jsonError
      ? 'Preview paused: the sample data is not valid JSON.'
      : marginsInvalid
        ? 'Preview paused: a margin is not a CSS length.'
        : paper
          ? `Preview paused: ${paper.message}`
          : canvasInvalid
            ? 'Preview paused: each side of the canvas is a whole number of pixels from 16 to 5000.'
            : inputsProblem
              ? `Preview paused: ${inputsProblem}.`
              : null,
    refusedReason: requiredRefusal,
  });

  // A lenient template prints a blank for them, with the warning the service gives a saved template.
  const requiredWarnings = useMemo(
    () => (draft.strict ? [] : missingRequiredWarnings(formFields, t.data)),
    [draft.strict, formFields, t.data],
  );
  const fieldLabel = useCallback((key: string) => formFields.find((f) => f.key === key)?.label, [formFields]);

  // Run's refusals about places in the data, each shown at its field while that value is unchanged.
  const [refusals, setRefusals] = useState<Refusal[]>([]);
  const marks = useMemo(() => {
    const all = new Map<string, FieldMark[]>();
    const requiredMark: FieldMark = draft.strict
      ? { tone: 'error', message: 'Required: strict mode refuses the data without it.' }
      : { tone: 'warning', message: 'Required: left empty, it prints as a blank (with a warning).' };
    for (const field of missing) addMark(all, fieldInputId(field.key), requiredMark);
    for (const refusal of refusals) {
      const place = isEditedSince(refusal, t.data) ? null : formPlace(formFields, refusal.loc);
      if (place?.id) addMark(all, place.id, { tone: 'error', message: refusal.message });
    }
    return all;
  }, [missing, refusals, formFields, t.data, draft.strict]);
  const markedErrors = [...marks.values()].filter((list) => list.some((m) => m.tone === 'error')).length;

  /** Shows the form's input for a place in the data (from a refusal's "Show in the form"). */
  const showField = (loc: DataLoc) => {
    const place = formPlace(formFields, loc);
    if (!place) return;
    setDataTab('form');
    requestAnimationFrame(() => {
      const target = place.id ? document.getElementById(place.id) : null;
      target?.scrollIntoView({ block: 'center' });
      target?.focus({ preventScroll: true });
    });
  };

  // A new PDF means the text rendered: the code panes' problems are gone (even if the data is refused).
  useEffect(() => {
    if (preview.version > 0) t.clearCodeProblems();
  }, [preview.version]);

  // Run's PDF/UA findings, at their elements (stamped with the text that ran: stale once it is edited).
  const [runProblems, setRunProblems] = useState<Problem[]>([]);
  const problems: Problem[] = useMemo(
    () => [...t.problems, ...preview.problems, ...runProblems],
    [t.problems, preview.problems, runProblems],
  );
  // The problems that still apply: one whose pane has changed since may be fixed, and is not listed.
  const current = useMemo(() => paneSources(draft, t.data), [draft, t.data]);
  const openSaveProblems = t.problems.filter((p) => !isStale(p, current));
  // The preview's too: a save refused, then fixed, is not "fixed" while the preview still reports a
  // problem on a pane (its tab shows the badge); that problem is listed instead.
  const openPreviewProblems = preview.problems.filter(
    (p) => !isStale(p, current) && !openSaveProblems.some((q) => q.pane === p.pane && q.line === p.line),
  );
  const openProblems = [...openSaveProblems, ...openPreviewProblems];
  const openRunProblems = runProblems.filter((p) => !isStale(p, current));
  const [inputsRefused, setInputsRefused] = useState(false);

  const save = async (): Promise<boolean> => {
    setSavedNotice(false);
    setInputsRefused(!!inputsProblem);
    if (inputsProblem) return false;
    const saved = await t.save();
    setSavedNotice(saved);
    return saved;
  };

  // Leaving with unsaved changes (a link, a tab, browser back, sign out) asks first: keep editing,
  // discard them, or save and go (a refused save stays, showing why). Reload and close: beforeunload below.
  // With a copy kept in this browser, leaving unsaved loses nothing: half-finished work that cannot be saved yet (a syntax error) can wait.
  const latest = useRef({ save, name: draft.name, kept: false, discardLocal: t.discardLocal });
  latest.current = {
    save,
    name: draft.name.trim() || template.name,
    kept: t.localCopy === 'kept',
    discardLocal: t.discardLocal,
  };
  useEffect(() => {
    if (!t.dirty) return;
    return setNavigationGuard(async () => {
      const { kept } = latest.current;
      const choice = await chooseAction({
        title: 'Leave without saving?',
        message: kept
          ? `Your changes to “${latest.current.name}” are not saved. A copy stays in this browser and is offered back when you open the template again.`
          : `Your changes to “${latest.current.name}” are not saved. If you leave now, they are lost.`,
        cancelLabel: 'Keep editing',
        choices: [
          { id: 'discard', label: 'Discard changes', tone: 'danger' },
          ...(kept ? [{ id: 'keep' as const, label: 'Leave, keep the copy', tone: 'plain' as const }] : []),
          { id: 'save', label: 'Save and leave', tone: 'primary' },
        ],
      });
      if (choice === 'save') return latest.current.save();
      if (choice === 'discard') latest.current.discardLocal();
      return choice === 'discard' || choice === 'keep';
    });
  }, [t.dirty]);

  // After a failed save, show the first pane with a problem so its marker is visible.
  useEffect(() => {
    const first = t.problems[0];
    if (!first) return;
    if (
      first.pane === 'html' ||
      first.pane === 'css' ||
      first.pane === 'header_html' ||
      first.pane === 'footer_html' ||
      first.pane === 'page'
    )
      setTemplateTab(first.pane);
    else if (first.pane === 'sample_data') setDataTab('json');
    else if (first.pane === 'fields') setDataTab('fields');
  }, [t.problems]);

  // After a PDF/UA refusal in Run, the pane of its first finding, so its marker is visible.
  useEffect(() => {
    const first = runProblems.find((p) => !isStale(p, current));
    if (first && (first.pane === 'html' || first.pane === 'header_html' || first.pane === 'footer_html'))
      setTemplateTab(first.pane);
  }, [runProblems]);

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

  const jsonProblems = useMemo(
    () =>
      t.jsonError ? [{ message: t.jsonError, line: Number(/line (\d+)/.exec(t.jsonError)?.[1]) || undefined }] : [],
    [t.jsonError],
  );

  return (
    <main class="screen editor-screen" id="main">
      <h1 class="visually-hidden" tabIndex={-1}>
        Edit template {t.saved?.name}
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
          saveShortcut
        >
          {t.dirty && t.localCopy && (
            <span class="muted local-copy" data-testid="local-copy" data-state={t.localCopy}>
              {t.localCopy === 'kept'
                ? 'A copy is kept in this browser'
                : t.localCopy === 'too_large'
                  ? 'Too large to keep a copy in this browser'
                  : 'This browser does not keep a copy'}
            </span>
          )}
        </EditorBar>
        <SectionNav
          sections={[
            {
              id: 'template-section',
              label: 'Template',
              marked:
                openProblems.length > 0 || openRunProblems.length > 0 || marginsInvalid || !!paper || canvasInvalid,
            },
            { id: 'editor-data-section', label: 'Data', marked: markedErrors > 0 },
            { id: 'versions-section', label: 'Versions' },
            { id: 'preview-section', label: 'Preview', marked: preview.status === 'error' },
            { id: 'run-section', label: isImage ? 'Image' : 'Run' },
          ]}
        />
      </div>
      {t.localOffer && (
        <div class="notice notice-info local-offer" role="status" data-testid="local-offer">
          <p>
            You have unsaved changes from {formatTime(new Date(t.localOffer.savedAt).toISOString())}, kept in this
            browser.
            {t.localOffer.base !== template.updated_at &&
              ' The template was saved since then (elsewhere, or in another tab): restoring puts your copy in the editor, and Save replaces the saved one with it.'}
          </p>
          <div class="button-row">
            <button
              type="button"
              class="button button-primary"
              onClick={() => {
                t.restore(t.localOffer!);
                t.settleLocalOffer(true);
              }}
            >
              Restore
            </button>
            <button type="button" class="button" onClick={() => t.settleLocalOffer(false)}>
              Discard
            </button>
          </div>
        </div>
      )}
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
      {t.refusedForProblems && openProblems.length > 0 && (
        <div class="notice notice-error" role="alert" data-testid="save-error">
          <p>Not saved: {openProblems.length === 1 ? 'one problem' : `${openProblems.length} problems`} to fix.</p>
          <ul>
            {openProblems.map((p, i) => (
              <li key={i}>{describeProblem(p)}</li>
            ))}
          </ul>
        </div>
      )}
      {t.refusedForProblems && openProblems.length === 0 && t.dirty && (
        <div class="notice notice-info" role="status" data-testid="save-fixed">
          <p>Problems fixed. Not saved yet: press Save to keep your changes.</p>
        </div>
      )}
      <div class="editor-grid">
        <div class="editor-main">
          <TemplatePanes
            draft={draft}
            update={t.update}
            problems={problems}
            selected={templateTab}
            onSelect={setTemplateTab}
            kind={template.kind}
          />
          {/* Not "data-…": the form's inputs are data-<key> (field-marks.ts), and a field may be called "title" or "section". */}
          <section class="panel" id="editor-data-section" aria-labelledby="editor-data-title">
            <div class="panel-head">
              <h2 id="editor-data-title" tabIndex={-1}>
                Data
              </h2>
              {!inferred && <span class="muted">The form follows the fields set in the Fields tab, not the HTML.</span>}
            </div>
            <Tabs<DataTab>
              idPrefix="data"
              label="Data"
              selected={dataTab}
              onSelect={setDataTab}
              tabs={[
                {
                  id: 'form',
                  label: 'Form',
                  ...(markedErrors
                    ? { badge: '!', badgeLabel: `${markedErrors} field${markedErrors > 1 ? 's' : ''} to fix` }
                    : {}),
                },
                { id: 'json', label: 'JSON', ...(t.jsonError ? { badge: '!', badgeLabel: 'invalid JSON' } : {}) },
                { id: 'fields', label: `Fields (${fields.length})` },
              ]}
            />
            <TabPanel idPrefix="data" id="form" selected={dataTab === 'form'}>
              <DataForm
                fields={formFields}
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
                problems={jsonProblems}
              />
              {t.jsonError && <ErrorNotice>{t.jsonError}</ErrorNotice>}
            </TabPanel>
            <TabPanel idPrefix="data" id="fields" selected={dataTab === 'fields'}>
              <FieldsEditor
                fields={fields}
                inferred={t.saved?.fields_inferred ?? true}
                saving={t.saving}
                onSave={t.saveFields}
              />
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
          <PreviewPane
            preview={preview}
            canvas={previewCanvas}
            extraWarnings={requiredWarnings}
            fieldLabel={fieldLabel}
          />
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
              templateName={t.saved?.name ?? template.name}
            />
          ) : (
            <RunPanel
              templateId={template.id}
              templateName={t.saved?.name ?? template.name}
              strict={t.saved?.strict ?? false}
              data={t.data}
              fields={runFields}
              inputsProblem={inputsProblem}
              templateDirty={t.templateDirty}
              versions={versions.data ?? []}
              version={runVersion}
              onVersion={setRunVersion}
              onRefused={setRefusals}
              savedTexts={savedSources}
              onTemplateProblems={setRunProblems}
              onShowField={showField}
              canShowField={(loc) => formPlace(formFields, loc)?.id != null}
            />
          )}
        </div>
      </div>
    </main>
  );
}

/**
 * The editor's sections as a list of jumps, in the sticky bar: on a long page (a 40-field form, or a
 * phone, where the preview comes after the editor) each panel is one click away. A jump scrolls the
 * section to the top and moves focus to its heading. Buttons, not #links: a fragment would add a
 * history entry the browser's back button would then have to undo.
 */
function SectionNav({ sections }: { sections: { id: string; label: string; marked?: boolean }[] }) {
  const jump = (id: string) => {
    const section = document.getElementById(id);
    if (!section) return;
    // Below the sticky bar, whose height depends on the width (it wraps on a phone).
    const bar = document.querySelector('.editor-bar')?.getBoundingClientRect().height ?? 0;
    window.scrollTo({ top: window.scrollY + section.getBoundingClientRect().top - bar - 8 });
    section.querySelector<HTMLElement>('h2')?.focus({ preventScroll: true });
  };
  return (
    <nav class="section-nav" aria-label="Editor sections">
      <ul>
        {sections.map((s) => (
          <li key={s.id}>
            <button type="button" class="section-link" onClick={() => jump(s.id)}>
              {s.label}
              {s.marked && (
                <span class="tab-badge" role="img" aria-label="needs attention">
                  !
                </span>
              )}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
