/** The template's text panes (HTML, CSS, header, footer) and page setup, as tabs with problem badges. */
import { useMemo } from 'preact/hooks';
import { CodeEditor } from '../../components/code-editor.js';
import { TabPanel, Tabs, type TabItem } from '../../components/tabs.js';
import { describeProblem, type CodePane, type Problem } from '../../lib/problems.js';
import { PageSetupForm } from './page-setup-form.js';
import { invalidMargins, type Draft } from './use-template-draft.js';

export type TemplateTab = CodePane | 'page';

const PANES: { id: CodePane; label: string; language: 'html' | 'css'; placeholder: string }[] = [
  { id: 'html', label: 'HTML', language: 'html', placeholder: '<h1>Hello {{ name }}</h1>' },
  { id: 'css', label: 'CSS', language: 'css', placeholder: 'h1 { color: navy; }' },
  { id: 'header_html', label: 'Header', language: 'html', placeholder: '<div style="font-size:9px">{{ company }}</div>' },
  { id: 'footer_html', label: 'Footer', language: 'html', placeholder: '<div style="font-size:9px">Page <span class="pageNumber"></span></div>' },
];

interface Props {
  draft: Draft;
  update(patch: Partial<Draft>): void;
  problems: Problem[];
  selected: TemplateTab;
  onSelect(tab: TemplateTab): void;
}

export function TemplatePanes({ draft, update, problems, selected, onSelect }: Props) {
  // Problems reported for text that has since been edited are stale: no badge, no list entry.
  // (The editor's own markers filter the same way.)
  const byPane = useMemo(() => {
    const map = new Map<string, Problem[]>();
    for (const p of problems) {
      const text = (draft as unknown as Record<string, unknown>)[p.pane];
      if (p.source !== undefined && typeof text === 'string' && p.source !== text) continue;
      const list = map.get(p.pane) ?? [];
      // Save and preview often report the same line: say it once.
      if (p.line !== undefined && list.some((q) => q.line === p.line)) continue;
      map.set(p.pane, [...list, p]);
    }
    return map;
  }, [problems, draft]);

  const badge = (pane: string, extra = 0) => {
    const count = (byPane.get(pane)?.length ?? 0) + extra;
    return count ? { badge: '!', badgeLabel: `${count} problem${count > 1 ? 's' : ''}` } : {};
  };

  const tabs: TabItem<TemplateTab>[] = [
    ...PANES.map((p) => ({ id: p.id, label: p.label, ...badge(p.id) })),
    { id: 'page', label: 'Page setup', ...badge('page', invalidMargins(draft).length) },
  ];

  return (
    <section class="panel" aria-labelledby="template-panes-title">
      <h2 id="template-panes-title" class="visually-hidden">
        Template
      </h2>
      <Tabs idPrefix="tpl" label="Template parts" tabs={tabs} selected={selected} onSelect={onSelect} />
      {PANES.map((pane) => {
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
                {paneProblems.map((p, i) => (
                  <li key={i} data-line={p.line ?? ''}>
                    {describeProblem(p)}
                  </li>
                ))}
              </ul>
            )}
          </TabPanel>
        );
      })}
      <TabPanel idPrefix="tpl" id="page" selected={selected === 'page'}>
        <PageSetupForm draft={draft} update={update} problems={byPane.get('page') ?? []} />
      </TabPanel>
    </section>
  );
}
