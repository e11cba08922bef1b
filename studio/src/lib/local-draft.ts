/**
 * Unsaved editor work kept in this browser (issue 50): a crashed tab, a reload or one Enter on the
 * browser's "Leave site?" prompt would otherwise lose it, and a template with a syntax error cannot be
 * saved to the service at all. One entry per account and template in localStorage, written while the
 * editor has unsaved changes and removed once they are saved or discarded; offered back when the
 * template is opened again. Bounded: an entry past MAX_ENTRY_CHARS is not kept (the editor says so),
 * and at most MAX_ENTRIES are kept, the oldest going first. The API key is never stored here.
 */

const PREFIX = 'pressroom.draft.';
/** ~2 MB of UTF-16 per entry: a large template fits; a few of them stay within a browser's ~5 MB per site. */
export const MAX_ENTRY_CHARS = 1_000_000;
/** Templates with local copies at once; older copies than these are dropped. */
export const MAX_ENTRIES = 20;

/** What is kept: the editor's text panes and settings, as typed, and the sample data's JSON text (valid or not). */
export interface LocalDraft<D> {
  /** When it was last written (epoch ms). */
  savedAt: number;
  /** The template's `updated_at` the changes were made on: a later one means it was saved elsewhere since. */
  base: string;
  draft: D;
  jsonText: string;
}

const keyOf = (accountId: string, templateId: string) => `${PREFIX}${accountId}.${templateId}`;

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** The kept copy of a template's unsaved changes, or null. */
export function readLocalDraft<D>(accountId: string, templateId: string): LocalDraft<D> | null {
  const text = storage()?.getItem(keyOf(accountId, templateId));
  if (!text) return null;
  try {
    const value = JSON.parse(text) as LocalDraft<D>;
    return typeof value.savedAt === 'number' && typeof value.jsonText === 'string' && value.draft ? value : null;
  } catch {
    return null;
  }
}

/** Keeps the copy; false when it is too large, or the browser refused it (storage full or disabled). */
export function writeLocalDraft<D>(accountId: string, templateId: string, entry: LocalDraft<D>): boolean {
  const store = storage();
  if (!store) return false;
  const text = JSON.stringify(entry);
  if (text.length > MAX_ENTRY_CHARS) {
    store.removeItem(keyOf(accountId, templateId));
    return false;
  }
  const key = keyOf(accountId, templateId);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      store.setItem(key, text);
      dropOldest(store, key);
      return true;
    } catch {
      // Full: make room by dropping the other copies, oldest first, and try once more.
      dropOldest(store, key, 0);
    }
  }
  return false;
}

export function removeLocalDraft(accountId: string, templateId: string): void {
  storage()?.removeItem(keyOf(accountId, templateId));
}

/** Keeps at most `keep` copies besides `current`, dropping the oldest. */
function dropOldest(store: Storage, current: string, keep = MAX_ENTRIES - 1): void {
  const others: { key: string; savedAt: number }[] = [];
  for (let i = 0; i < store.length; i++) {
    const key = store.key(i);
    if (!key || !key.startsWith(PREFIX) || key === current) continue;
    let savedAt = 0;
    try {
      savedAt = Number((JSON.parse(store.getItem(key) ?? '{}') as { savedAt?: number }).savedAt) || 0;
    } catch {
      // unreadable: oldest
    }
    others.push({ key, savedAt });
  }
  others.sort((a, b) => b.savedAt - a.savedAt);
  for (const { key } of others.slice(Math.max(0, keep))) store.removeItem(key);
}
