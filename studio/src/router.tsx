/**
 * Client-side routes on the History API. The server answers index.html for any path outside the API,
 * so each of these addresses can be reloaded or bookmarked.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { name: 'templates' }
  | { name: 'editor'; templateId: string }
  | { name: 'jobs' }
  | { name: 'assets' }
  | { name: 'transactions' }
  | { name: 'pdf-tools' }
  | { name: 's3' }
  | { name: 'api-keys' }
  | { name: 'not-found'; path: string };

/** Addresses of the screens. */
export const paths = {
  templates: '/templates',
  editor: (id: string) => `/templates/${encodeURIComponent(id)}`,
  jobs: '/jobs',
  assets: '/assets',
  transactions: '/transactions',
  pdfTools: '/tools/pdf',
  s3: '/settings/s3',
  apiKeys: '/settings/api-keys',
};

/** The route of a pathname. */
export function matchRoute(pathname: string): Route {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/' || path === paths.templates) return { name: 'templates' };
  const editor = /^\/templates\/([^/]+)$/.exec(path);
  if (editor) return { name: 'editor', templateId: decodeURIComponent(editor[1]!) };
  if (path === paths.jobs) return { name: 'jobs' };
  if (path === paths.assets) return { name: 'assets' };
  if (path === paths.transactions) return { name: 'transactions' };
  if (path === paths.pdfTools) return { name: 'pdf-tools' };
  if (path === paths.s3) return { name: 's3' };
  if (path === paths.apiKeys) return { name: 'api-keys' };
  return { name: 'not-found', path };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

/** Goes to `path` without a page load. */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (path === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  listeners.forEach((l) => l());
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
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
