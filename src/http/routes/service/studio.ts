/**
 * The studio (web dashboard, built by Vite into `studio/dist`) served at `/` from the API process.
 * Hashed assets are cached for a year; index.html is revalidated, and answers every client-side route
 * (`/templates/abc…`) so addresses can be reloaded. API-owned prefixes never fall back to it: an unknown
 * `/v1/...` still gets the coded JSON 404. Every studio response carries a strict Content-Security-Policy
 * (no inline script, no eval, nothing off-origin; blob: for the PDF preview).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';

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

/** Paths the API owns: an unknown one is a JSON 404, never the studio page. */
const API_PREFIXES = ['/v1', '/docs', '/openapi.json', '/healthz', '/readyz', '/metrics'];

const YEAR_SECONDS = 365 * 24 * 3600;

/** `studio/dist` of this checkout or package (same depth from src/http/routes/service and dist/http/routes/service). */
export function defaultStudioDir(): string {
  return fileURLToPath(new URL('../../../../studio/dist', import.meta.url));
}

/** True when `distDir` holds a built studio. */
export function hasStudioBuild(distDir: string): boolean {
  return existsSync(join(distDir, 'index.html'));
}

function isApiPath(path: string): boolean {
  return API_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
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

  app.get('/', { config: { auth: 'public' }, schema: { hide: true } }, async (_request, reply) => sendIndex(reply));

  app.get('/*', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const path = `/${(request.params as { '*': string })['*']}`;
    if (isApiPath(path)) return reply.callNotFound();
    const lastSegment = path.slice(path.lastIndexOf('/') + 1);
    if (lastSegment.includes('.')) {
      // A file: hashed build assets never change; anything else (favicon) is revalidated.
      setSecurityHeaders(reply);
      const hashed = path.startsWith('/assets/');
      return reply.sendFile(path.slice(1), hashed ? { maxAge: YEAR_SECONDS * 1000, immutable: true } : { maxAge: 0 });
    }
    return sendIndex(reply);
  });
}
