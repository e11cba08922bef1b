/**
 * The studio's addresses, in one list: the studio's router (studio/src/router.tsx) turns them into
 * screens, and the server answers its page (index.html) for exactly these, so a screen can be reloaded
 * or bookmarked while every other path stays the API's, answering a JSON 404 when unknown (issue 50
 * point 6: `/.well-known/oauth-*` answered the page, and OAuth clients such as mcp-remote crashed on it).
 * `:name` is one path segment, as the browser writes it (percent-encoded).
 */

export const STUDIO_ROUTES = [
  { screen: 'templates', pattern: '/' },
  { screen: 'templates', pattern: '/templates' },
  { screen: 'editor', pattern: '/templates/:templateId' },
  { screen: 'jobs', pattern: '/jobs' },
  { screen: 'batches', pattern: '/batches' },
  { screen: 'batches', pattern: '/batches/:batchId' },
  { screen: 'assets', pattern: '/assets' },
  { screen: 'transactions', pattern: '/transactions' },
  { screen: 'pdf-tools', pattern: '/tools/pdf' },
  { screen: 'einvoice-validate', pattern: '/tools/einvoice' },
  { screen: 'certificates', pattern: '/settings/certificates' },
  { screen: 's3', pattern: '/settings/s3' },
  { screen: 'api-keys', pattern: '/settings/api-keys' },
] as const;

export type StudioScreen = (typeof STUDIO_ROUTES)[number]['screen'];

/** A studio address: its screen and its `:name` segments, decoded. */
export interface StudioRouteMatch {
  readonly screen: StudioScreen;
  readonly params: Readonly<Record<string, string>>;
}

const segmentsOf = (path: string): string[] => path.split('/').filter((segment, i) => i > 0 && segment !== '');

/** The screen at `pathname` (trailing slashes ignored), or undefined: not a studio address. */
export function matchStudioRoute(pathname: string): StudioRouteMatch | undefined {
  const segments = segmentsOf(pathname.replace(/\/+$/, '') || '/');
  for (const route of STUDIO_ROUTES) {
    const parts = segmentsOf(route.pattern);
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = parts.every((part, i) => {
      if (!part.startsWith(':')) return part === segments[i];
      const value = decodeSegment(segments[i]!);
      if (value === undefined) return false;
      params[part.slice(1)] = value;
      return true;
    });
    if (matches) return { screen: route.screen, params };
  }
  return undefined;
}

/** True when `pathname` starts with a segment only the studio uses (`/templates/…`, `/settings/…`). */
export function isUnderStudioPrefix(pathname: string): boolean {
  const first = segmentsOf(pathname)[0];
  return first !== undefined && STUDIO_ROUTES.some((route) => segmentsOf(route.pattern)[0] === first);
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
