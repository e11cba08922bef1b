/**
 * Closing the HTTP server without the keep-alive wait. `server.close()` closes the connections idle
 * at that moment, once; a connection whose response was still finishing then (the client may have
 * every byte already, while Node has not yet emitted the response's `finish`) becomes idle a moment
 * later and stays open until `keepAliveTimeout` (72 s in Fastify) ends it — and close waits for it.
 * Measured: a test app's close took 70 s instead of milliseconds, when the machine was busy enough
 * for a file download to finish just after close began. So while the server closes, connections that
 * have become idle are closed again every CLOSE_IDLE_EVERY_MS; responses in progress still finish.
 */
import type { FastifyInstance } from 'fastify';

const CLOSE_IDLE_EVERY_MS = 100;

export function closeIdleConnectionsWhileClosing(app: FastifyInstance): void {
  let timer: NodeJS.Timeout | undefined;
  app.addHook('preClose', (done) => {
    const server = app.server;
    if (server.listening) {
      timer = setInterval(() => server.closeIdleConnections(), CLOSE_IDLE_EVERY_MS);
      timer.unref();
      server.once('close', () => clearInterval(timer));
    }
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(timer);
    done();
  });
}
