/**
 * Client-side routes on the History API. The server answers index.html for exactly the addresses of
 * STUDIO_ROUTES, so each screen can be reloaded or bookmarked.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { matchStudioRoute } from '../../src/shared/studio-routes.js';

export type Route =
  | { name: 'templates' }
  | { name: 'editor'; templateId: string }
  | { name: 'jobs' }
  | { name: 'batches'; batchId: string | null }
  | { name: 'assets' }
  | { name: 'transactions' }
  | { name: 'pdf-tools' }
  | { name: 'einvoice-validate' }
  | { name: 'certificates' }
  | { name: 's3' }
  | { name: 'api-keys' }
  | { name: 'not-found'; path: string };

/** Addresses of the screens. */
export const paths = {
  templates: '/templates',
  editor: (id: string) => `/templates/${encodeURIComponent(id)}`,
  jobs: '/jobs',
  batches: '/batches',
  batch: (id: string) => `/batches/${encodeURIComponent(id)}`,
  assets: '/assets',
  transactions: '/transactions',
  pdfTools: '/tools/pdf',
  einvoiceValidate: '/tools/einvoice',
  certificates: '/settings/certificates',
  s3: '/settings/s3',
  apiKeys: '/settings/api-keys',
};

/** The route of a pathname: the addresses are the server's too (src/shared/studio-routes.ts). */
export function matchRoute(pathname: string): Route {
  const found = matchStudioRoute(pathname);
  if (!found) return { name: 'not-found', path: pathname.replace(/\/+$/, '') || '/' };
  if (found.screen === 'editor') return { name: 'editor', templateId: found.params.templateId! };
  if (found.screen === 'batches') return { name: 'batches', batchId: found.params.batchId ?? null };
  return { name: found.screen };
}

const listeners = new Set<() => void>();

/**
 * Asked before the app leaves the current screen (in-app links, browser back and forward, sign out):
 * resolves true to go on. One at a time: the editor sets it while it holds unsaved changes.
 */
export type NavigationGuard = () => Promise<boolean>;
let guard: NavigationGuard | null = null;

/** Sets the guard (null: none); returns a function that removes it, if it is still this one. */
export function setNavigationGuard(next: NavigationGuard | null): () => void {
  guard = next;
  return () => {
    if (guard === next) guard = null;
  };
}

/** Asks the guard, if any, whether the current screen may be left. */
export function canLeave(): Promise<boolean> {
  return guard ? guard() : Promise.resolve(true);
}

// Each history entry carries its position, so a back or forward the guard holds can be undone by as
// many steps, and redone once the user agrees (the popstate event cannot be cancelled).
const positionOf = (state: unknown): number =>
  typeof (state as { position?: unknown } | null)?.position === 'number' ? (state as { position: number }).position : 0;
let position = positionOf(history.state);
if (history.state === null) history.replaceState({ position }, '');
/** popstate events the app caused itself: one undoing a held move (ignored), one redoing it (let through). */
let undoing = false;
let redoing = false;

window.addEventListener('popstate', (event) => {
  const target = positionOf(event.state);
  if (undoing) {
    undoing = false;
    return;
  }
  if (guard && !redoing && target !== position) {
    const steps = target - position;
    undoing = true;
    history.go(-steps);
    void canLeave().then((ok) => {
      if (!ok) return;
      redoing = true;
      history.go(steps);
    });
    return;
  }
  redoing = false;
  position = target;
  listeners.forEach((l) => l());
});

/** Goes to `path` without a page load, once the guard (if any) agrees; resolves whether it went. */
export async function navigate(path: string, options: { replace?: boolean } = {}): Promise<boolean> {
  if (path === location.pathname + location.search) return true;
  if (!(await canLeave())) return false;
  if (options.replace) history.replaceState({ position }, '', path);
  else history.pushState({ position: ++position }, '', path);
  listeners.forEach((l) => l());
  return true;
}

/** The current pathname, re-rendering on navigation. */
export function usePathname(): string {
  const [pathname, setPathname] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPathname(location.pathname);
    listeners.add(update);
    return () => {
      listeners.delete(update);
    };
  }, []);
  return pathname;
}

type LinkProps = Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'> & { href: string; children: ComponentChildren };

/** An <a> that navigates in-app on a plain click and behaves as a link otherwise (new tab, copy). */
export function Link({ href, children, onClick, ...rest }: LinkProps) {
  return (
    <a
      {...rest}
      href={href}
      onClick={(event) => {
        if (typeof onClick === 'function') onClick(event);
        if (
          event.defaultPrevented ||
          event.button !== 0 ||
          event.metaKey ||
          event.ctrlKey ||
          event.shiftKey ||
          event.altKey
        )
          return;
        event.preventDefault();
        void navigate(href);
      }}
    >
      {children}
    </a>
  );
}
