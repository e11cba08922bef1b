/**
 * The template's text panes (HTML, CSS, header, footer) and page setup, as tabs with problem badges.
 * An image template has no header, footer or paper: its last tab is the canvas size instead. Both
 * kinds have the strict-mode setting on that last tab.
 */
import { useMemo } from 'preact/hooks';
import { CodeEditor } from '../../components/code-editor.js';
import { TabPanel, Tabs, type TabItem } from '../../components/tabs.js';
import { describeProblem, isStale, knownNames, type CodePane, type Problem } from '../../lib/problems.js';
import { PageSetupForm } from './page-setup-form.js';
import type { TemplateKind } from '../../lib/api-types.js';
import { invalidCanvas, invalidMargins, paneSources, paperProblem, type Draft } from './use-template-draft.js';

export type TemplateTab = CodePane | 'page';

const PANES: { id: CodePane; label: string; language: 'html' | 'css'; placeholder: string }[] = [
  { id: 'html', label: 'HTML', language: 'html', placeholder: '<h1>Hello {{ name }}</h1>' },
  { id: 'css', label: 'CSS', language: 'css', placeholder: 'h1 { color: navy; }' },
  {
    id: 'header_html',
    label: 'Header',
    language: 'html',
    placeholder: '<div style="font-size:9px">{{ company }}</div>',
  },
  {
    id: 'footer_html',
    label: 'Footer',
    language: 'html',
    placeholder: '<div style="font-size:9px">Page <span class="pageNumber"></span></div>',
  },
];

interface Props {
  draft: Draft;
  update(patch: Partial<Draft>): void;
  problems: Problem[];
  selected: TemplateTab;
  onSelect(tab: TemplateTab): void;
  kind?: TemplateKind;
}

const IMAGE_PANES = new Set<CodePane>(['html', 'css']);

export function TemplatePanes({ draft, update, problems, selected, onSelect, kind = 'pdf' }: Props) {
  const panes = kind === 'image' ? PANES.filter((p) => IMAGE_PANES.has(p.id)) : PANES;
  // Problems reported for text that has since been edited are stale: no badge, no list entry.
  // (The editor's own markers filter the same way.)
  const sources = useMemo(() => paneSources(draft, {}), [draft]);
  const byPane = useMemo(() => {
    const map = new Map<string, Problem[]>();
    for (const p of problems) {
      if (isStale(p, sources)) continue;
      const list = map.get(p.pane) ?? [];
      // Save and preview often report the same line: say it once.
      if (p.line !== undefined && list.some((q) => q.line === p.line)) continue;
      map.set(p.pane, [...list, p]);
    }
    return map;
  }, [problems, sources]);

  const badge = (pane: string, extra = 0) => {
    const count = (byPane.get(pane)?.length ?? 0) + extra;
    return count ? { badge: '!', badgeLabel: `${count} problem${count > 1 ? 's' : ''}` } : {};
  };

  const tabs: TabItem<TemplateTab>[] = [
    ...panes.map((p) => ({ id: p.id, label: p.label, ...badge(p.id) })),
    kind === 'image'
      ? { id: 'page', label: 'Canvas', ...badge('page', invalidCanvas(draft).length) }
      : {
          id: 'page',
          label: 'Page setup',
          ...badge('page', invalidMargins(draft).length + (paperProblem(draft) ? 1 : 0)),
        },
  ];

  return (
    <section class="panel" id="template-section" aria-labelledby="template-panes-title">
      <h2 id="template-panes-title" class="visually-hidden" tabIndex={-1}>
        Template
      </h2>
      <Tabs idPrefix="tpl" label="Template parts" tabs={tabs} selected={selected} onSelect={onSelect} />
      {panes.map((pane) => {
        const paneProblems = byPane.get(pane.id) ?? [];
        return (
          <TabPanel key={pane.id} idPrefix="tpl" id={pane.id} selected={selected === pane.id} class="code-panel">
            <CodeEditor
              id={`editor-${pane.id}`}
              label={`${pane.label} template`}
              language={pane.language}
              value={draft[pane.id]}
              onChange={(value) => update({ [pane.id]: value })}
              problems={paneProblems}
              placeholder={pane.placeholder}
              describedBy={paneProblems.length ? `problems-${pane.id}` : undefined}
            />
            {paneProblems.length > 0 && (
              <ul class="problems" id={`problems-${pane.id}`} aria-label={`${pane.label} problems`}>
                {paneProblems.map((p, i) => {
                  const known = knownNames(p);
                  return (
                    <li key={i} data-line={p.line ?? ''}>
                      {describeProblem(p)}
                      {known && (
                        <details class="known-names">
                          <summary>
                            The {known.kind === 'filter' ? 'filters' : 'tests'} you can use ({known.names.length})
                          </summary>
                          <p>
                            {known.names.map((name, j) => (
                              <span key={name}>
                                {j > 0 && ', '}
                                <code>{name}</code>
                              </span>
                            ))}
                          </p>
                        </details>
                      )}
                    </li>
                  );
                })}
              </ul>
            )}
          </TabPanel>
        );
      })}
      <TabPanel idPrefix="tpl" id="page" selected={selected === 'page'}>
        {kind === 'image' ? (
          <CanvasForm draft={draft} update={update} />
        ) : (
          <PageSetupForm draft={draft} update={update} problems={byPane.get('page') ?? []} />
        )}
        <StrictModeSetting draft={draft} update={update} />
      </TabPanel>
    </section>
  );
}

/** The template's strict mode (Jinja2's StrictUndefined), for PDF and image templates alike. */
function StrictModeSetting({ draft, update }: { draft: Draft; update(patch: Partial<Draft>): void }) {
  return (
    <div class="page-setup">
      <label class="field checkbox">
        <input
          type="checkbox"
          checked={draft.strict}
          onChange={(e) => update({ strict: e.currentTarget.checked })}
          aria-describedby="strict-help"
        />
        <span class="field-label">Strict mode</span>
      </label>
      <p class="help" id="strict-help">
        A required field or variable missing from the data, or a text where a number belongs, is refused (422, nothing
        charged) instead of printing a blank with a warning.
      </p>
    </div>
  );
}

/** An image template's canvas: the size the template is laid out at (the rendered width scales it). */
function CanvasForm({ draft, update }: { draft: Draft; update(patch: Partial<Draft>): void }) {
  const bad = invalidCanvas(draft);
  return (
    <div class="page-setup">
      <div class="form-row">
        <label class="field">
          <span class="field-label">Canvas width (px)</span>
          <input
            type="number"
            min={16}
            max={5000}
            value={draft.canvas_width}
            onInput={(e) => update({ canvas_width: e.currentTarget.value })}
            aria-invalid={bad.includes('width') || undefined}
          />
        </label>
        <label class="field">
          <span class="field-label">Canvas height (px)</span>
          <input
            type="number"
            min={16}
            max={5000}
            value={draft.canvas_height}
            onInput={(e) => update({ canvas_height: e.currentTarget.value })}
            aria-invalid={bad.includes('height') || undefined}
          />
        </label>
      </div>
      {bad.length > 0 ? (
        <p class="field-error">Each side is a whole number of pixels from 16 to 5000.</p>
      ) : (
        <p class="help">CSS pixels the template is laid out at; an image of another width is scaled to it.</p>
      )}
    </div>
  );
}
