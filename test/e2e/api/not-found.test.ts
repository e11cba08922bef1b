/**
 * Every path that is not a studio address answers like an API (issue 50 point 6): an unknown one is
 * the coded JSON 404, so an OAuth discovery (`/.well-known/oauth-*`, what mcp-remote asks after a 401)
 * reads "no OAuth here" instead of the studio's HTML. The studio's addresses (the one list its router
 * matches, src/shared/studio-routes.ts) answer its page; a browser asking for a page under a
 * studio-only prefix gets that page with 404, which shows the studio's "not found" screen.
 */
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { get as httpGet } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STUDIO_ROUTES } from '../../../src/shared/studio-routes.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ensureStudioBuild } from '../studio/studio-browser.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('unknown paths', () => {
  let t: TestApp;

  beforeAll(async () => {
    ensureStudioBuild();
    t = await startTestApp('sqlite');
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });

  const get = async (path: string, accept?: string) => {
    const res = await fetch(`${t.baseUrl}${path}`, { headers: accept ? { accept } : {} });
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  };

  const rawGet = (path: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const { hostname, port } = new URL(t.baseUrl);
      httpGet({ hostname, port, path }, (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (chunk: string) => (text += chunk))
          .on('end', () => resolve({ status: res.statusCode!, text }));
      }).on('error', reject);
    });

  const notStudio = [
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration',
    '/v1/nope',
    '/v1/templates/a/b/c',
    '/mcp/x',
    '/docs/nope',
    '/openapi.yaml?format=yaml',
    '/healthz/extra',
    '/register',
    '/nope',
    '/favicon.ico',
    '/assets/missing.js',
    '/index.htm',
  ];

  it.each(notStudio)(
    'GET %s answers the JSON 404 in the error shape, for an API client and a browser alike',
    async (path) => {
      for (const accept of [undefined, 'application/json', BROWSER_ACCEPT]) {
        const res = await get(path, accept);
        expect(res.status, `${path} (Accept: ${accept})`).toBe(404);
        expect(res.type, `${path} (Accept: ${accept})`).toContain('application/json');
        expect(JSON.parse(res.text)).toEqual({ error: 'NOT_FOUND', message: `No route GET ${path.split('?')[0]}.` });
      }
    },
  );

  it('an MCP client’s OAuth discovery after a wrong key’s 401 learns there is no OAuth here (the SDK that mcp-remote bundles)', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    };
    const refused = await fetch(`${t.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        'x-api-key': `pr_${'x'.repeat(48)}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify(initialize),
    });
    expect(refused.status).toBe(401);
    // Where mcp-remote crashed with "Unexpected token '<'": the studio's HTML parsed as metadata.
    await expect(discoverOAuthProtectedResourceMetadata(new URL(`${t.baseUrl}/mcp`))).rejects.toThrow(
      'Resource server does not implement OAuth 2.0 Protected Resource Metadata.',
    );
    expect(await discoverAuthorizationServerMetadata(new URL(t.baseUrl))).toBeUndefined();
  });

  it('every studio address answers the studio page', async () => {
    const addresses = STUDIO_ROUTES.map((r) => r.pattern.replace(/:[a-zA-Z]+/g, 'abc%20def'));
    expect(addresses).toContain('/templates/abc%20def');
    for (const path of [...addresses, '/templates/', '/settings/s3/']) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.type, path).toContain('text/html');
      expect(res.text, path).toContain('<div id="app"');
    }
  });

  it('a browser asking for a page under a studio prefix gets the studio page with 404 (its "not found" screen); anything else there gets JSON', async () => {
    for (const path of ['/templates/abc/versions', '/settings', '/tools', '/batches/b1/items']) {
      const page = await get(path, BROWSER_ACCEPT);
      expect(page.status, path).toBe(404);
      expect(page.type, path).toContain('text/html');
      expect(page.text, path).toContain('<div id="app"');
      const api = await get(path, 'application/json');
      expect(api.status, path).toBe(404);
      expect(JSON.parse(api.text), path).toMatchObject({ error: 'NOT_FOUND' });
    }
  });

  it('a path that cannot be decoded is refused in the error shape too, and names of other shapes find no file', async () => {
    const bad = await get('/templates/%ZZ', BROWSER_ACCEPT);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toEqual({
      error: 'INVALID_REQUEST',
      message: expect.stringContaining('each % in it must be followed by two hexadecimal digits'),
    });
    // Sent as written (fetch would resolve the dots first).
    for (const path of [
      '/assets/../index.html',
      '/assets/%2e%2e/index.html',
      '/assets/..%2f..%2fpackage.json',
      '//etc/passwd',
      '/.env',
      '/favicon.svg/',
    ]) {
      const res = await rawGet(path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.text), path).toMatchObject({ error: 'NOT_FOUND' });
    }
  });

  it('still serves the build files, and the API', async () => {
    const html = (await get('/')).text;
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect((await get(script!)).status).toBe(200);
    expect((await get('/favicon.svg')).status).toBe(200);
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/openapi.json')).type).toContain('application/json');
  });
});
