/**
 * The studio (web dashboard, built by Vite into `studio/dist`) served at `/` from the API process.
 * Hashed assets are cached for a year; index.html is revalidated, and answers the studio's addresses
 * (src/shared/studio-routes.ts, the list its router matches) so they can be reloaded. Nothing else
 * falls back to it (issue 50 point 6): an unknown path answers the coded JSON 404, so an API client or
 * an OAuth discovery (`/.well-known/…`) never reads a page. The one exception is a browser asking for a
 * page under a studio-only prefix (`/templates/x/y`, `Accept: text/html`): the studio page with status
 * 404, which shows its "not found" screen. Every studio response carries a strict
 * Content-Security-Policy (no inline script, no eval, nothing off-origin; blob: for the PDF preview).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import { isUnderStudioPrefix, matchStudioRoute } from '../../../shared/studio-routes.js';

export const STUDIO_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // CodeMirror injects its styles as <style> elements at run time.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  // The live preview shows a blob: PDF in an iframe.
  "frame-src 'self' blob:",
  "object-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const YEAR_SECONDS = 365 * 24 * 3600;

/** `studio/dist` of this checkout or package (same depth from src/http/routes/service and dist/http/routes/service). */
export function defaultStudioDir(): string {
  return fileURLToPath(new URL('../../../../studio/dist', import.meta.url));
}

/** True when `distDir` holds a built studio. */
export function hasStudioBuild(distDir: string): boolean {
  return existsSync(join(distDir, 'index.html'));
}

/** Every file of the build, as `/assets/index-….js`: the build does not change while the server runs. */
function buildFiles(distDir: string): Set<string> {
  const files = readdirSync(distDir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return new Set(
    files.map((entry) => `/${relative(distDir, join(entry.parentPath, entry.name)).split(sep).join('/')}`),
  );
}

/** A browser navigating (its Accept names HTML), not a script, a fetch or an API client. */
function wantsPage(request: FastifyRequest): boolean {
  return /\btext\/html\b/i.test(request.headers.accept ?? '');
}

function setSecurityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', STUDIO_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'same-origin');
}

/** Register with `app.register(studioRoutes, { distDir })`. */
export async function studioRoutes(app: FastifyInstance, options: { distDir: string }): Promise<void> {
  // serve: false: only reply.sendFile; the one wildcard route below decides what each path gets.
  await app.register(fastifyStatic, {
    root: options.distDir,
    serve: false,
    decorateReply: true,
    index: false,
    dotfiles: 'deny',
  });

  const sendIndex = (reply: FastifyReply) => {
    setSecurityHeaders(reply);
    return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  };

  const files = buildFiles(options.distDir);

  app.get('/', { config: { auth: 'public' }, schema: { hide: true } }, async (_request, reply) => sendIndex(reply));

  app.get('/*', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
    // As the browser wrote it (percent-encoded), as the studio's router reads location.pathname.
    const path = request.url.split('?')[0]!;
    if (files.has(path)) {
      // Hashed build assets never change; anything else (favicon) is revalidated.
      setSecurityHeaders(reply);
      const hashed = path.startsWith('/assets/');
      return reply.sendFile(path.slice(1), hashed ? { maxAge: YEAR_SECONDS * 1000, immutable: true } : { maxAge: 0 });
    }
    if (matchStudioRoute(path)) return sendIndex(reply);
    const lastSegment = path.slice(path.lastIndexOf('/') + 1);
    if (wantsPage(request) && isUnderStudioPrefix(path) && !lastSegment.includes('.'))
      return sendIndex(reply.code(404));
    return reply.callNotFound();
  });
}
