/**
 * Accessible tabs (WAI-ARIA tabs pattern): one tab stop for the list, arrow keys / Home / End move
 * between tabs, and panels stay mounted (hidden) so editors keep their state and undo history.
 */
import type { ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';

export interface TabItem<T extends string> {
  id: T;
  label: string;
  /** Marks a tab with a problem ("!") or a count. */
  badge?: string;
  badgeLabel?: string;
}

interface TabsProps<T extends string> {
  idPrefix: string;
  label: string;
  tabs: readonly TabItem<T>[];
  selected: T;
  onSelect(id: T): void;
}

export const tabId = (prefix: string, id: string) => `${prefix}-tab-${id}`;
export const panelId = (prefix: string, id: string) => `${prefix}-panel-${id}`;

export function Tabs<T extends string>({ idPrefix, label, tabs, selected, onSelect }: TabsProps<T>) {
  const list = useRef<HTMLDivElement>(null);

  const focusTab = (index: number) => {
    const tab = tabs[(index + tabs.length) % tabs.length];
    if (!tab) return;
    onSelect(tab.id);
    list.current?.querySelector<HTMLElement>(`#${CSS.escape(tabId(idPrefix, tab.id))}`)?.focus();
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const index = tabs.findIndex((t) => t.id === selected);
    const moves: Record<string, number> = {
      ArrowRight: index + 1,
      ArrowLeft: index - 1,
      Home: 0,
      End: tabs.length - 1,
    };
    const target = moves[event.key];
    if (target === undefined) return;
    event.preventDefault();
    focusTab(target);
  };

  return (
    <div class="tabs" role="tablist" aria-label={label} ref={list} onKeyDown={onKeyDown}>
      {tabs.map((tab) => (
        <button
          key={tab.id}
          type="button"
          role="tab"
          id={tabId(idPrefix, tab.id)}
          aria-controls={panelId(idPrefix, tab.id)}
          aria-selected={tab.id === selected}
          tabIndex={tab.id === selected ? 0 : -1}
          class="tab"
          onClick={() => onSelect(tab.id)}
        >
          {tab.label}
          {tab.badge && (
            <span class="tab-badge" role="img" aria-label={tab.badgeLabel ?? tab.badge}>
              {tab.badge}
            </span>
          )}
        </button>
      ))}
    </div>
  );
}

export function TabPanel({
  idPrefix,
  id,
  selected,
  children,
  class: className = '',
}: {
  idPrefix: string;
  id: string;
  selected: boolean;
  children: ComponentChildren;
  class?: string;
}) {
  return (
    <div
      role="tabpanel"
      id={panelId(idPrefix, id)}
      aria-labelledby={tabId(idPrefix, id)}
      hidden={!selected}
      class={`tab-panel ${className}`}
    >
      {children}
    </div>
  );
}
