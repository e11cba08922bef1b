/**
 * A CodeMirror 6 editor as a controlled component: `value` in, `onChange` out, and the server's problems
 * shown as lint diagnostics (gutter marker + underline) at the line the engine reported.
 * Tab is left to the browser's focus order (no indentWithTab), so keyboard users can leave the editor.
 */
import { useLayoutEffect, useRef } from 'preact/hooks';
import { EditorState, type Extension } from '@codemirror/state';
import {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
  placeholder as placeholderExt,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { html } from '@codemirror/lang-html';
import { css } from '@codemirror/lang-css';
import { json } from '@codemirror/lang-json';
import { jinja } from '@codemirror/lang-jinja';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';

export type EditorLanguage = 'html' | 'css' | 'json';

export interface EditorProblem {
  line?: number;
  column?: number;
  message: string;
  /** The text the problem was reported for: shown only while the editor still holds it. */
  source?: string;
}

interface CodeEditorProps {
  id: string;
  /** Accessible name of the editing area. */
  label: string;
  value: string;
  language: EditorLanguage;
  onChange(value: string): void;
  problems?: readonly EditorProblem[];
  placeholder?: string;
  describedBy?: string;
}

function languageExtension(language: EditorLanguage): Extension {
  // Templates are Jinja over HTML or CSS: `{{ }}` / `{% %}` highlighted on top of the host language.
  if (language === 'html') return jinja({ base: html({ autoCloseTags: false }) });
  if (language === 'css') return jinja({ base: css() });
  return json();
}

function toDiagnostics(state: EditorState, problems: readonly EditorProblem[]): Diagnostic[] {
  const doc = state.doc;
  return problems.map((problem) => {
    if (!problem.line)
      return { from: 0, to: Math.min(doc.length, doc.line(1).to), severity: 'error', message: problem.message };
    const line = doc.line(Math.min(Math.max(problem.line, 1), doc.lines));
    const from = problem.column ? Math.min(line.from + problem.column - 1, line.to) : line.from;
    const to = line.to > from ? line.to : Math.min(from + 1, doc.length);
    return { from, to, severity: 'error', message: problem.message };
  });
}

const theme = EditorView.theme({
  '&': { fontSize: '13px', height: '100%' },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '1.5' },
  '.cm-content': { paddingBlock: '6px' },
  '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '-2px' },
});

export function CodeEditor({
  id,
  label,
  value,
  language,
  onChange,
  problems = [],
  placeholder,
  describedBy,
}: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;

  useLayoutEffect(() => {
    const attributes: Record<string, string> = { 'aria-label': label, 'aria-multiline': 'true', id };
    if (describedBy) attributes['aria-describedby'] = describedBy;
    const state = EditorState.create({
      doc: value,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        lintGutter(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([...defaultKeymap, ...historyKeymap]),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of(attributes),
        languageExtension(language),
        placeholder ? placeholderExt(placeholder) : [],
        theme,
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChangeRef.current(update.state.doc.toString());
        }),
      ],
    });
    const editor = new EditorView({ state, parent: host.current! });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
    // The editor is created once per language; value and problems are synced by the effects below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [language, id]);

  // Layout effects run in the same task as the render. A plain useEffect runs later, and if the user
  // types in between, an effect holding the older value would undo the edit, whose onChange would then
  // queue the newer value, and the two would swap forever (seen as a frozen tab while typing).
  useLayoutEffect(() => {
    const editor = view.current;
    if (!editor) return;
    const current = editor.state.doc.toString();
    if (current === value) return;
    const head = Math.min(editor.state.selection.main.head, value.length);
    editor.dispatch({ changes: { from: 0, to: current.length, insert: value }, selection: { anchor: head } });
  }, [value]);

  // A problem describes the text it was reported for: once that text is edited its marker is hidden
  // until the next save or preview reports again (a stale line number would point at the wrong line).
  useLayoutEffect(() => {
    const editor = view.current;
    if (!editor) return;
    const doc = editor.state.doc.toString();
    const shown = problems.filter((p) => p.source === undefined || p.source === doc);
    editor.dispatch(setDiagnostics(editor.state, toDiagnostics(editor.state, shown)));
  }, [problems, value]);

  return <div class="code-editor" ref={host} data-editor={id} />;
}
