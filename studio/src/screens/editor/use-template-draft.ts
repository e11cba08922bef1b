/**
 * The editor's working copy of one template: the text panes and page setup (the draft), the sample
 * data (as an object and as the JSON pane's text), the fields, and saving them back with PUT.
 * The JSON text and the data object stay in step: typing valid JSON updates the data; the form writes
 * the data and re-renders the text.
 */
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError } from '../../api/client.js';
import { api } from '../../api/session.js';
import type { Field, MarginSide, Orientation, PageFormat, PageSetup, Template } from '../../lib/api-types.js';
import { isPageLength } from '../../lib/format.js';
import { formatDataJson, parseDataJson, type DataObject } from '../../lib/form-data.js';
import { CODE_PANES, problemsFromBody, withSources, type Problem } from '../../lib/problems.js';

const isCodeProblem = (p: Problem) => (CODE_PANES as readonly string[]).includes(p.pane);

export interface Draft {
  name: string;
  html: string;
  css: string;
  header_html: string;
  footer_html: string;
  format: PageFormat;
  orientation: Orientation;
  margin: Record<MarginSide, string>;
}

export function draftOf(t: Template): Draft {
  const page = t.page ?? {};
  const m = page.margin ?? {};
  return {
    name: t.name,
    html: t.html,
    css: t.css ?? '',
    header_html: page.header_html ?? '',
    footer_html: page.footer_html ?? '',
    format: page.format ?? 'A4',
    orientation: page.orientation ?? 'portrait',
    margin: { top: m.top ?? '', right: m.right ?? '', bottom: m.bottom ?? '', left: m.left ?? '' },
  };
}

/** The page object sent to the API: empty margins and header/footer are left out. */
export function pageOf(d: Draft): PageSetup {
  const margin = Object.fromEntries(Object.entries(d.margin).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, v.trim()]));
  return {
    format: d.format,
    orientation: d.orientation,
    ...(Object.keys(margin).length ? { margin } : {}),
    ...(d.header_html.trim() ? { header_html: d.header_html } : {}),
    ...(d.footer_html.trim() ? { footer_html: d.footer_html } : {}),
  };
}

/** Margins that do not match the server's CSS length rule. */
export function invalidMargins(d: Draft): MarginSide[] {
  return (Object.keys(d.margin) as MarginSide[]).filter((side) => d.margin[side].trim() !== '' && !isPageLength(d.margin[side].trim()));
}

export function useTemplateDraft(template: Template | undefined) {
  const [saved, setSaved] = useState<Template | undefined>(template);
  const [draft, setDraft] = useState<Draft | null>(template ? draftOf(template) : null);
  const [data, setDataState] = useState<DataObject>(template?.sample_data ?? {});
  const [jsonText, setJsonText] = useState(formatDataJson(template?.sample_data ?? {}));
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);

  useEffect(() => {
    if (!template) return;
    setSaved(template);
    setDraft(draftOf(template));
    setDataState(template.sample_data ?? {});
    setJsonText(formatDataJson(template.sample_data ?? {}));
    setJsonError(null);
    setProblems([]);
  }, [template?.id]);

  const update = useCallback((patch: Partial<Draft>) => setDraft((d) => (d ? { ...d, ...patch } : d)), []);

  /** From the form: new data, and the JSON text follows. */
  const setData = useCallback((next: DataObject) => {
    setDataState(next);
    setJsonText(formatDataJson(next));
    setJsonError(null);
  }, []);

  /** From the JSON pane: new text; the data follows when it parses. */
  const setJson = useCallback((text: string) => {
    setJsonText(text);
    const parsed = parseDataJson(text);
    if ('data' in parsed) {
      setDataState(parsed.data);
      setJsonError(null);
    } else setJsonError(parsed.error);
  }, []);

  /** The template text, name or page setup differ from the saved template (what a run would use). */
  const templateDirty = useMemo(() => !!saved && !!draft && JSON.stringify(draftOf(saved)) !== JSON.stringify(draft), [saved, draft]);
  const dirty = useMemo(() => templateDirty || (!!saved && JSON.stringify(saved.sample_data ?? {}) !== JSON.stringify(data)), [templateDirty, saved, data]);

  const put = async (body: Record<string, unknown>): Promise<boolean> => {
    if (!saved) return false;
    setSaving(true);
    setSaveError(null);
    try {
      const next = await api().json<Template>('PUT', `/v1/templates/${saved.id}`, { body });
      setSaved(next);
      setProblems([]);
      return true;
    } catch (error) {
      const page = body.page as PageSetup | undefined;
      const sources = { html: body.html as string | undefined, css: body.css as string | undefined, header_html: page ? page.header_html ?? '' : undefined, footer_html: page ? page.footer_html ?? '' : undefined };
      const found = error instanceof ApiError && error.status === 422 ? withSources(problemsFromBody(error.body), sources) : [];
      setProblems(found);
      setSaveError(found.length ? `Not saved: ${found.length === 1 ? 'one problem' : `${found.length} problems`} to fix.` : (error as Error).message);
      return false;
    } finally {
      setSaving(false);
    }
  };

  /** PUT the text panes, page setup and sample data. */
  const save = () => {
    if (!draft) return Promise.resolve(false);
    if (jsonError) {
      setSaveError('Not saved: the sample data is not valid JSON.');
      return Promise.resolve(false);
    }
    return put({ name: draft.name.trim() || saved?.name, html: draft.html, css: draft.css, page: pageOf(draft), sample_data: data });
  };

  /** PUT edited fields, or null to go back to inference. */
  const saveFields = (fields: Field[] | null) => put({ fields });

  /** Drops the problems on the code panes (the preview just rendered the same text). */
  const clearCodeProblems = useCallback(() => setProblems((list) => (list.some(isCodeProblem) ? list.filter((p) => !isCodeProblem(p)) : list)), []);

  return { saved, draft, update, data, setData, jsonText, setJson, jsonError, dirty, templateDirty, save, saveFields, saving, saveError, problems, clearCodeProblems };
}

export type TemplateDraft = ReturnType<typeof useTemplateDraft>;
