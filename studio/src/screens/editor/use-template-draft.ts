/**
 * The editor's working copy of one template: the text panes and page setup — or, for an image
 * template, its canvas — (the draft), the sample
 * data (as an object and as the JSON pane's text), the fields, and saving them back with PUT.
 * The JSON text and the data object stay in step: typing valid JSON updates the data; the form writes
 * the data and re-renders the text. Unsaved changes are also kept in this browser (lib/local-draft.ts)
 * and offered back when the template is opened again.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from '../../api/client.js';
import { api } from '../../api/session.js';
import {
  pageSizeProblem,
  type Field,
  type MarginSide,
  type Orientation,
  type PageFormat,
  type PageSetup,
  type Template,
} from '../../lib/api-types.js';
import { isPageLength } from '../../lib/format.js';
import { formatDataJson, parseDataJson, type DataObject } from '../../lib/form-data.js';
import { CODE_PANES, problemsFromBody, withSources, type Pane, type Problem } from '../../lib/problems.js';
import {
  MAX_ENTRY_CHARS,
  readLocalDraft,
  removeLocalDraft,
  writeLocalDraft,
  type LocalDraft,
} from '../../lib/local-draft.js';

const JSON_NOT_SAVED = 'Not saved: the sample data is not valid JSON.';

const isCodeProblem = (p: Problem) => (CODE_PANES as readonly string[]).includes(p.pane);

export interface Draft {
  name: string;
  html: string;
  css: string;
  header_html: string;
  footer_html: string;
  /** A named paper size, or `custom` for width × height. */
  format: PageFormat | 'custom';
  width: string;
  height: string;
  orientation: Orientation;
  margin: Record<MarginSide, string>;
  tagged: boolean;
  /** PDF/UA by default for this template's documents. */
  pdf_ua: boolean;
  /** Strict mode: undefined variables and missing required fields are errors, not warnings. */
  strict: boolean;
  /** Image templates: the canvas size as typed (CSS pixels). */
  canvas_width: string;
  canvas_height: string;
}

const CANVAS_MIN = 16;
const CANVAS_MAX = 5000;

/** The canvas sides that are not whole numbers within the server's 16–5000. */
export function invalidCanvas(d: Draft): ('width' | 'height')[] {
  const bad = (v: string) => !/^\d+$/.test(v.trim()) || Number(v) < CANVAS_MIN || Number(v) > CANVAS_MAX;
  return [...(bad(d.canvas_width) ? (['width'] as const) : []), ...(bad(d.canvas_height) ? (['height'] as const) : [])];
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
    format: page.width !== undefined ? 'custom' : (page.format ?? 'A4'),
    width: page.width ?? '',
    height: page.height ?? '',
    orientation: page.orientation ?? 'portrait',
    margin: { top: m.top ?? '', right: m.right ?? '', bottom: m.bottom ?? '', left: m.left ?? '' },
    tagged: page.tagged ?? true,
    pdf_ua: page.pdf_ua ?? false,
    strict: t.strict ?? false,
    canvas_width: String(t.canvas?.width ?? 1080),
    canvas_height: String(t.canvas?.height ?? 1080),
  };
}

/** The page object sent to the API: empty margins and header/footer are left out. */
export function pageOf(d: Draft): PageSetup {
  const margin = Object.fromEntries(
    Object.entries(d.margin)
      .filter(([, v]) => v.trim() !== '')
      .map(([k, v]) => [k, v.trim()]),
  );
  return {
    ...(d.format === 'custom' ? { width: d.width.trim(), height: d.height.trim() } : { format: d.format }),
    orientation: d.orientation,
    ...(Object.keys(margin).length ? { margin } : {}),
    ...(d.header_html.trim() ? { header_html: d.header_html } : {}),
    ...(d.footer_html.trim() ? { footer_html: d.footer_html } : {}),
    // Only the non-default choice is sent: a template saved before this option looks the same.
    ...(d.tagged ? {} : { tagged: false }),
    ...(d.pdf_ua && d.tagged ? { pdf_ua: true } : {}),
  };
}

/** Each pane's current text or value as a string: a problem reported for another value is stale. */
export function paneSources(d: Draft, data: DataObject): Partial<Record<Pane, string>> {
  const { header_html, footer_html, ...page } = pageOf(d);
  return {
    html: d.html,
    css: d.css,
    header_html: header_html ?? '',
    footer_html: footer_html ?? '',
    page: JSON.stringify(page),
    name: d.name.trim(),
    sample_data: JSON.stringify(data),
  };
}

/** Why the custom paper size cannot be printed (the server's own rule), or null. */
export function paperProblem(d: Draft): { field: 'format' | 'width' | 'height'; message: string } | null {
  // An empty box is a side not given yet (the server would see no such field).
  return d.format === 'custom'
    ? (pageSizeProblem({ width: d.width.trim() || undefined, height: d.height.trim() || undefined }) ??
        (d.width.trim()
          ? null
          : { field: 'width', message: 'Give page.width and page.height for a custom paper size' }))
    : null;
}

/** Margins that do not match the server's CSS length rule. */
export function invalidMargins(d: Draft): MarginSide[] {
  return (Object.keys(d.margin) as MarginSide[]).filter(
    (side) => d.margin[side].trim() !== '' && !isPageLength(d.margin[side].trim()),
  );
}

/** How the unsaved changes are kept in this browser: `kept`, `too_large` to keep, `unavailable` (storage off or full), or null (nothing to keep). */
export type LocalCopy = 'kept' | 'too_large' | 'unavailable' | null;

/** Delay between a change and writing the local copy (also written at once when the page is hidden). */
const LOCAL_WRITE_DELAY_MS = 300;

export function useTemplateDraft(template: Template | undefined, accountId: string | null = null) {
  const [saved, setSaved] = useState<Template | undefined>(template);
  const [draft, setDraft] = useState<Draft | null>(template ? draftOf(template) : null);
  const [data, setDataState] = useState<DataObject>(template?.sample_data ?? {});
  const [jsonText, setJsonText] = useState(formatDataJson(template?.sample_data ?? {}));
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  /** The last save was refused for `problems` (which may since have been fixed: see the editor's banner). */
  const [refusedForProblems, setRefusedForProblems] = useState(false);

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
      setSaveError((current) => (current === JSON_NOT_SAVED ? null : current));
    } else setJsonError(parsed.error);
  }, []);

  /** The template text, name or page setup differ from the saved template (what a run would use). */
  const templateDirty = useMemo(
    () => !!saved && !!draft && JSON.stringify(draftOf(saved)) !== JSON.stringify(draft),
    [saved, draft],
  );
  const dirty = useMemo(
    () => templateDirty || (!!saved && JSON.stringify(saved.sample_data ?? {}) !== JSON.stringify(data)),
    [templateDirty, saved, data],
  );

  const local = useLocalCopy({ template, accountId, saved, draft, jsonText, unsaved: dirty || jsonError !== null });

  /** Puts a kept copy's text and settings in the editor (still unsaved: Save sends it). */
  const restore = useCallback(
    (entry: LocalDraft<Draft>) => {
      setDraft((d) => (d ? { ...d, ...entry.draft, margin: { ...d.margin, ...entry.draft.margin } } : d));
      setJson(entry.jsonText);
    },
    [setJson],
  );

  /** PUT `body`; on a 422 the problems are stamped with `sources`, the values they were found in. */
  const put = async (body: Record<string, unknown>, sources: Partial<Record<Pane, string>> = {}): Promise<boolean> => {
    if (!saved) return false;
    setSaving(true);
    setSaveError(null);
    setRefusedForProblems(false);
    try {
      const next = await api().json<Template>('PUT', `/v1/templates/${saved.id}`, { body });
      setSaved(next);
      setProblems([]);
      return true;
    } catch (error) {
      const found =
        error instanceof ApiError && error.status === 422 ? withSources(problemsFromBody(error.body), sources) : [];
      setProblems(found);
      setRefusedForProblems(found.length > 0);
      setSaveError(found.length ? null : (error as Error).message);
      return false;
    } finally {
      setSaving(false);
    }
  };

  /** PUT the text panes, page setup and sample data. */
  const save = () => {
    if (!draft) return Promise.resolve(false);
    if (jsonError) {
      setSaveError(JSON_NOT_SAVED);
      return Promise.resolve(false);
    }
    // A form template keeps its PDF (replaced on its own: replacedPdf) and has no text or page to save.
    if (saved?.kind === 'pdf_form') return put({ name: draft.name.trim() || saved.name, sample_data: data });
    const common = {
      name: draft.name.trim() || saved?.name,
      html: draft.html,
      css: draft.css,
      sample_data: data,
      strict: draft.strict,
    };
    // An image template has a canvas instead of a page setup (the API refuses `page` on it).
    if (saved?.kind === 'image') {
      if (invalidCanvas(draft).length) {
        setSaveError(
          `Not saved: each side of the canvas is a whole number of pixels from ${CANVAS_MIN} to ${CANVAS_MAX}.`,
        );
        return Promise.resolve(false);
      }
      return put(
        { ...common, canvas: { width: Number(draft.canvas_width), height: Number(draft.canvas_height) } },
        paneSources(draft, data),
      );
    }
    return put({ ...common, page: pageOf(draft) }, paneSources(draft, data));
  };

  /** PUT edited fields, or null to go back to inference. */
  const saveFields = (fields: Field[] | null) => put({ fields });

  /** A form template whose PDF was replaced (PUT pdf_base64 by the form panel): the answer is what is saved now. */
  const replacedPdf = useCallback((next: Template) => setSaved(next), []);

  /** Drops the problems on the code panes (the preview just rendered the same text). */
  const clearCodeProblems = useCallback(
    () => setProblems((list) => (list.some(isCodeProblem) ? list.filter((p) => !isCodeProblem(p)) : list)),
    [],
  );

  return {
    saved,
    draft,
    update,
    data,
    setData,
    jsonText,
    setJson,
    jsonError,
    dirty,
    templateDirty,
    save,
    saveFields,
    replacedPdf,
    saving,
    saveError,
    refusedForProblems,
    problems,
    clearCodeProblems,
    restore,
    ...local,
  };
}

/**
 * The local copy of unsaved changes: the one found when the template opened is `offer`ed (and nothing
 * is written over it until the user restores or discards it); afterwards every change is written
 * shortly after it is made (and at once when the page is hidden or the editor closes), and removed
 * when nothing is unsaved any more.
 */
function useLocalCopy({
  template,
  accountId,
  saved,
  draft,
  jsonText,
  unsaved,
}: {
  template: Template | undefined;
  accountId: string | null;
  saved: Template | undefined;
  draft: Draft | null;
  jsonText: string;
  unsaved: boolean;
}) {
  const [offer, setOffer] = useState<LocalDraft<Draft> | null>(null);
  // The account is known a moment after a reload: the copy is looked for then, and nothing is written before.
  const [looked, setLooked] = useState(false);
  useEffect(() => {
    if (!template || !accountId || looked) return;
    setLooked(true);
    const found = readLocalDraft<Draft>(accountId, template.id);
    // A copy equal to what the service has is nothing to offer.
    const same =
      found &&
      JSON.stringify({ ...draftOf(template), ...found.draft }) === JSON.stringify(draftOf(template)) &&
      found.jsonText.trim() === formatDataJson(template.sample_data ?? {}).trim();
    if (same) removeLocalDraft(accountId, template.id);
    else setOffer(found);
  }, [template?.id, accountId, looked]);
  const [localCopy, setLocalCopy] = useState<LocalCopy>(null);
  const pending = useRef<(() => void) | null>(null);

  useEffect(() => {
    if (!template || !accountId || !looked || offer || !draft) return;
    if (!unsaved) {
      removeLocalDraft(accountId, template.id);
      setLocalCopy(null);
      return;
    }
    const write = () => {
      pending.current = null;
      const entry: LocalDraft<Draft> = {
        savedAt: Date.now(),
        base: saved?.updated_at ?? template.updated_at,
        draft,
        jsonText,
      };
      const kept = writeLocalDraft(accountId, template.id, entry);
      setLocalCopy(kept ? 'kept' : JSON.stringify(entry).length > MAX_ENTRY_CHARS ? 'too_large' : 'unavailable');
    };
    pending.current = write;
    const timer = setTimeout(write, LOCAL_WRITE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [template?.id, accountId, looked, offer, draft, jsonText, unsaved]);

  // The last change is not lost to the delay: a hidden page (reload, closed tab) or a closed editor writes it now.
  useEffect(() => {
    const flush = () => pending.current?.();
    window.addEventListener('pagehide', flush);
    return () => {
      window.removeEventListener('pagehide', flush);
      flush();
    };
  }, []);

  return {
    /** Unsaved changes kept from an earlier visit, waiting for Restore or Discard. */
    localOffer: offer,
    localCopy,
    /** The user chose: the offer goes (restored into the editor by the caller, or dropped). */
    settleLocalOffer: (keep: boolean) => {
      if (!keep && template && accountId) removeLocalDraft(accountId, template.id);
      setOffer(null);
    },
    /** Discarded on leaving: the copy goes too, and nothing pending is written. */
    discardLocal: () => {
      pending.current = null;
      if (template && accountId) removeLocalDraft(accountId, template.id);
    },
  };
}

export type TemplateDraft = ReturnType<typeof useTemplateDraft>;
