import { request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { until } from '../../test/support/until.js';
import { closeIdleConnectionsWhileClosing } from './graceful-close.js';

describe('closing the HTTP server', () => {
  it('finishes a response in progress, then closes its keep-alive connection instead of waiting for the keep-alive timeout', async () => {
    // A keep-alive timeout far longer than the test's deadline: without the fix, close waits for it.
    const app = Fastify({ keepAliveTimeout: 600_000 });
    closeIdleConnectionsWhileClosing(app);
    let finishResponse: () => void = () => {};
    let responseStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => (responseStarted = resolve));
    app.get('/slow', async (_request, reply) => {
      reply.raw.writeHead(200, { 'content-type': 'text/plain', 'content-length': '4' });
      reply.raw.write('ab');
      responseStarted();
      await new Promise<void>((resolve) => (finishResponse = resolve));
      reply.raw.end('cd');
      return reply;
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;

    const agent = new Agent({ keepAlive: true });
    let socketClosed = false;
    const body = new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/slow', agent }, (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (chunk: string) => (text += chunk))
          .on('end', () => resolve(text))
          .on('error', reject);
      });
      req.on('socket', (socket) => socket.on('close', () => (socketClosed = true)));
      req.on('error', reject).end();
    });
    await started;
    // Close begins while the response is in progress: that connection is not idle yet.
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(closed).toBe(false); // the response in progress holds the close
    finishResponse();
    expect(await body).toBe('abcd');
    await Promise.race([
      closing,
      new Promise((_, reject) => setTimeout(() => reject(new Error('close still waiting after 60 s')), 60_000).unref()),
    ]);
    expect(closed).toBe(true);
    await until(() => socketClosed, 10_000, 'the client to see its connection closed');
    agent.destroy();
  }, 90_000);
});
