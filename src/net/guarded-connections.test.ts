/**
 * The guard against a real loopback server: refused connections must leave the server untouched,
 * allowed ones must arrive with the original Host header. Covers both doors: the undici dispatcher
 * (webhooks) and the Node Agent pair (AWS SDK).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { createServer as createHttpsServer, get as httpsGet } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConnector, fetch, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGuardedAgents } from './guarded-agents.js';
import { createGuardedDispatcher } from './guarded-dispatcher.js';
import { findOutboundBlockedError } from './outbound-blocked-error.js';
import { resolveCheckedAddress, type OutboundPolicy, type ResolveHost } from './resolve-checked-address.js';

interface Receiver {
  port: number;
  requests: Array<{ url: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

async function startReceiver(host: '127.0.0.1' | '::1'): Promise<Receiver> {
  const requests: Receiver['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    res.end('reached');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** A resolver that answers from a script, one answer list per call, repeating the last one. */
function scriptedResolver(...answers: string[][]): ResolveHost & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    const answer = answers[Math.min(calls.length, answers.length - 1)] ?? [];
    calls.push(hostname);
    return answer.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };
  return Object.assign(resolve, { calls });
}

let v4: Receiver;
let v6: Receiver;
beforeAll(async () => {
  v4 = await startReceiver('127.0.0.1');
  v6 = await startReceiver('::1');
});
afterAll(async () => {
  await v4.close();
  await v6.close();
});
beforeEach(() => {
  v4.requests.length = 0;
  v6.requests.length = 0;
});

const toLoopback = scriptedResolver(['127.0.0.1']);
const strict = { allowPrivateNetworks: false };
// URLs are built lazily: the ports exist only once beforeAll has run.
const blockedCases: Array<{ name: string; url: () => string; policy: OutboundPolicy }> = [
  { name: 'IPv4 loopback literal', url: () => `http://127.0.0.1:${v4.port}/`, policy: strict },
  { name: 'IPv6 loopback literal', url: () => `http://[::1]:${v6.port}/`, policy: strict },
  { name: 'localhost via the system resolver', url: () => `http://localhost:${v4.port}/`, policy: strict },
  { name: 'IPv4-mapped IPv6 loopback', url: () => `http://[::ffff:127.0.0.1]:${v4.port}/`, policy: strict },
  { name: 'decimal IPv4 loopback', url: () => `http://2130706433:${v4.port}/`, policy: strict },
  {
    name: 'a name that resolves to loopback',
    url: () => `http://hooks.customer.test:${v4.port}/`,
    policy: { allowPrivateNetworks: false, resolve: toLoopback },
  },
  {
    name: 'a name with one public and one loopback answer',
    url: () => `http://mixed.customer.test:${v4.port}/`,
    policy: { allowPrivateNetworks: false, resolve: scriptedResolver(['93.184.216.34', '127.0.0.1']) },
  },
];

async function expectBlocked(attempt: Promise<unknown>): Promise<void> {
  const error = await attempt.then(
    () => null,
    (e: unknown) => e,
  );
  expect(findOutboundBlockedError(error), String(error)).toBeDefined();
  expect(v4.requests).toHaveLength(0);
  expect(v6.requests).toHaveLength(0);
}

function nodeGet(url: string, agent: import('node:http').Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

describe('createGuardedDispatcher', () => {
  it.each(blockedCases)('refuses $name, and the server sees nothing', async ({ url, policy }) => {
    const dispatcher = createGuardedDispatcher(policy);
    try {
      await expectBlocked(request(url(), { dispatcher }));
      await expectBlocked(fetch(url(), { dispatcher, redirect: 'manual' }));
    } finally {
      await dispatcher.close();
    }
  });

  it('reaches the same server when private networks are allowed, keeping the Host header', async () => {
    const resolve = scriptedResolver(['127.0.0.1']);
    const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: true, resolve });
    try {
      for (const url of [
        `http://127.0.0.1:${v4.port}/a`,
        `http://[::ffff:127.0.0.1]:${v4.port}/b`,
        `http://hooks.customer.test:${v4.port}/c`,
      ]) {
        const res = await request(url, { dispatcher });
        expect(await res.body.text()).toBe('reached');
      }
      const res = await request(`http://[::1]:${v6.port}/d`, { dispatcher });
      expect(await res.body.text()).toBe('reached');
      expect(v4.requests.map((r) => r.url)).toEqual(['/a', '/b', '/c']);
      expect(v4.requests[2]?.headers.host).toBe(`hooks.customer.test:${v4.port}`);
      expect(v6.requests).toHaveLength(1);
    } finally {
      await dispatcher.close();
    }
  });

  it('catches DNS rebinding between a pre-flight check and the connection', async () => {
    const rebinding = scriptedResolver(['93.184.216.34'], ['127.0.0.1']);
    const policy = { allowPrivateNetworks: false, resolve: rebinding };
    // A naive caller checks first (public: fine) and then connects; the connection re-resolves.
    await expect(resolveCheckedAddress('rebind.customer.test', policy)).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
    const dispatcher = createGuardedDispatcher(policy);
    try {
      await expectBlocked(request(`http://rebind.customer.test:${v4.port}/`, { dispatcher }));
    } finally {
      await dispatcher.close();
    }
  });

  it('dials the checked address itself, so a later DNS answer cannot be used', async () => {
    const rebinding = scriptedResolver(['93.184.216.34'], ['127.0.0.1']);
    const dialled: Array<{ hostname: string; host?: string }> = [];
    const dispatcher = createGuardedDispatcher(
      { allowPrivateNetworks: false, resolve: rebinding },
      {
        // Stands in for the socket layer: records what it was asked to dial, dials nothing.
        connector: (options, callback) => {
          dialled.push({ hostname: options.hostname, host: options.host });
          callback(new Error('test connector: not dialling'), null);
        },
      },
    );
    try {
      await expect(request(`http://rebind.customer.test:${v4.port}/`, { dispatcher })).rejects.toThrow('not dialling');
      expect(dialled).toEqual([{ hostname: '93.184.216.34', host: `rebind.customer.test:${v4.port}` }]);
      expect(rebinding.calls).toEqual(['rebind.customer.test']); // resolved once, by the guard only
    } finally {
      await dispatcher.close();
    }
  });
});

describe('createGuardedAgents', () => {
  it.each(blockedCases)('refuses $name, and the server sees nothing', async ({ url, policy }) => {
    const agents = createGuardedAgents(policy);
    try {
      await expectBlocked(nodeGet(url(), agents.httpAgent));
    } finally {
      agents.destroy();
    }
  });

  it('reaches the same server when private networks are allowed, keeping the Host header', async () => {
    const agents = createGuardedAgents({ allowPrivateNetworks: true, resolve: scriptedResolver(['127.0.0.1']) });
    try {
      expect(await nodeGet(`http://hooks.customer.test:${v4.port}/x`, agents.httpAgent)).toEqual({
        status: 200,
        body: 'reached',
      });
      expect(await nodeGet(`http://[::1]:${v6.port}/y`, agents.httpAgent)).toEqual({ status: 200, body: 'reached' });
      expect(v4.requests[0]?.headers.host).toBe(`hooks.customer.test:${v4.port}`);
      expect(v6.requests).toHaveLength(1);
    } finally {
      agents.destroy();
    }
  });
});

/** A self-signed certificate for one name, made with openssl for this run. */
function selfSignedCertificate(name: string): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'pressroom-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${name}`,
        '-addext',
        `subjectAltName=DNS:${name}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Pinning dials an IP; TLS must still present and verify the original name (SNI + certificate).
describe('TLS through the guard', () => {
  const tls = selfSignedCertificate('hooks.customer.test');
  const hosts: string[] = [];
  const server = createHttpsServer(tls, (req, res) => {
    hosts.push(req.headers.host ?? '');
    res.end('tls reached');
  });
  let port = 0;
  const policy = { allowPrivateNetworks: true, resolve: scriptedResolver(['127.0.0.1']) };
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

  it('verifies the certificate against the name with the dispatcher', async () => {
    const dispatcher = createGuardedDispatcher(policy, { connector: buildConnector({ ca: tls.cert }) });
    try {
      const res = await request(`https://hooks.customer.test:${port}/`, { dispatcher });
      expect(await res.body.text()).toBe('tls reached');
      // Same IP, a name the certificate does not cover: verification must fail, not be skipped.
      await expect(request(`https://other.customer.test:${port}/`, { dispatcher })).rejects.toMatchObject({
        code: 'ERR_TLS_CERT_ALTNAME_INVALID',
      });
    } finally {
      await dispatcher.close();
    }
  });

  it('verifies the certificate against the name with the agents', async () => {
    const agents = createGuardedAgents(policy);
    const get = (host: string) =>
      new Promise<string>((resolve, reject) => {
        httpsGet(`https://${host}:${port}/`, { agent: agents.httpsAgent, ca: tls.cert }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c));
          res.on('end', () => resolve(body));
        }).on('error', reject);
      });
    try {
      expect(await get('hooks.customer.test')).toBe('tls reached');
      await expect(get('other.customer.test')).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
      expect(hosts.at(-1)).toBe(`hooks.customer.test:${port}`);
    } finally {
      agents.destroy();
    }
  });
});
