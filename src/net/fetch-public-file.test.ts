/**
 * fetchPublicFile against a real loopback server: what is refused before a connection (and never
 * reaches the server), redirect targets guarded again, the size cap, HTTP errors and the time limit.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildConnector } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchPublicFile, PublicFetchError } from './fetch-public-file.js';
import { createGuardedDispatcher } from './guarded-dispatcher.js';
import { OUTBOUND_BLOCKED_MESSAGE } from './outbound-blocked-error.js';
import type { ResolveHost } from './resolve-checked-address.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
let server: Server;
let port: number;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? '');
    if (req.url === '/logo.png')
      return void res.writeHead(200, { 'content-type': 'image/PNG; charset=binary' }).end(PNG);
    if (req.url === '/big') return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(4096));
    if (req.url === '/chunked-big') {
      res.writeHead(200, { 'content-type': 'image/png' });
      for (let i = 0; i < 8; i += 1) res.write(Buffer.alloc(1024));
      return void res.end();
    }
    if (req.url === '/missing') return void res.writeHead(404).end('no');
    if (req.url === '/to-logo') return void res.writeHead(302, { location: '/logo.png' }).end();
    if (req.url === '/to-private')
      return void res.writeHead(302, { location: `http://private.test:${port}/logo.png` }).end();
    if (req.url === '/to-ftp') return void res.writeHead(301, { location: 'ftp://files.example/logo.png' }).end();
    if (req.url === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    // /silent: never answers (the time limit ends it).
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const open = createGuardedDispatcher({ allowPrivateNetworks: true });
const options = { dispatcher: open, allowPrivateNetworks: true, maxBytes: 2048, timeoutMs: 20_000 };

async function failure(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PublicFetchError);
  return (error as Error).message;
}

describe('fetchPublicFile', () => {
  it('downloads a file and its media type, following a redirect', async () => {
    expect(await fetchPublicFile(`http://127.0.0.1:${port}/logo.png`, options)).toEqual({
      body: PNG,
      contentType: 'image/png',
    });
    expect((await fetchPublicFile(`http://127.0.0.1:${port}/to-logo`, options)).body).toEqual(PNG);
  });

  it('refuses private addresses and plain http unless private networks are allowed, without connecting', async () => {
    seen.length = 0;
    const strict = {
      ...options,
      dispatcher: createGuardedDispatcher({ allowPrivateNetworks: false }),
      allowPrivateNetworks: false,
    };
    expect(await failure(fetchPublicFile(`http://127.0.0.1:${port}/logo.png`, strict))).toBe(
      'the URL must start with https://',
    );
    expect(await failure(fetchPublicFile(`https://127.0.0.1:${port}/logo.png`, strict))).toContain(
      'public internet address',
    );
    expect(await failure(fetchPublicFile(`https://localhost:${port}/logo.png`, strict))).toContain(
      'public internet address',
    );
    expect(seen).toEqual([]);
  });

  it('guards every redirect target again: a scheme the URL check refuses, and a name that resolves to a private address', async () => {
    expect(await failure(fetchPublicFile(`http://127.0.0.1:${port}/to-ftp`, options))).toBe(
      'the URL must start with https://',
    );
    // public.test resolves to a public address (the test connector dials the loopback server instead);
    // private.test, the redirect target, resolves to 10.0.0.7 and is refused at connection time.
    const resolve: ResolveHost = async (host) => [
      { address: host === 'public.test' ? '93.184.216.34' : '10.0.0.7', family: 4 },
    ];
    const base = buildConnector({});
    const dispatcher = createGuardedDispatcher(
      { allowPrivateNetworks: false, resolve },
      { connector: (o, cb) => base({ ...o, hostname: '127.0.0.1' }, cb) },
    );
    seen.length = 0;
    expect(await failure(fetchPublicFile(`http://public.test:${port}/to-private`, { ...options, dispatcher }))).toBe(
      OUTBOUND_BLOCKED_MESSAGE,
    );
    expect(seen).toEqual(['/to-private']);
  });

  it('stops at the size cap (declared or streamed), HTTP errors, redirect loops and the time limit', async () => {
    expect(await failure(fetchPublicFile(`http://127.0.0.1:${port}/big`, options))).toBe(
      'the file is larger than 2048 bytes',
    );
    expect(await failure(fetchPublicFile(`http://127.0.0.1:${port}/chunked-big`, options))).toBe(
      'the file is larger than 2048 bytes',
    );
    expect(await failure(fetchPublicFile(`http://127.0.0.1:${port}/missing`, options))).toBe(
      'the server answered HTTP 404',
    );
    expect(await failure(fetchPublicFile(`http://127.0.0.1:${port}/loop`, options))).toBe('too many redirects');
    expect(await failure(fetchPublicFile(`http://127.0.0.1:${port}/silent`, { ...options, timeoutMs: 300 }))).toBe(
      'the download did not finish within 300 ms',
    );
  });
});
