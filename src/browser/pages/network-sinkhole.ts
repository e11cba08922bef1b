/**
 * The network-layer wall of the closed room: a TCP listener on 127.0.0.1 that Chromium is told is
 * its only proxy. Every connection is destroyed on accept, so whatever slips past request
 * interception (a request type the Fetch domain does not see, a WebRTC/WebSocket path, a future
 * Chromium feature) reaches nothing. Owned in-process, so there is no second service to run.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';

/** A running sinkhole; `connections` counts what Chromium tried to send out. */
export interface NetworkSinkhole {
  readonly port: number;
  connections(): number;
  close(): Promise<void>;
}

/** Binds the sinkhole on a free loopback port. */
export async function openNetworkSinkhole(): Promise<NetworkSinkhole> {
  let count = 0;
  const server: Server = createServer({ pauseOnConnect: true }, (socket) => {
    count += 1;
    socket.destroy();
  });
  server.on('error', () => {
    // A failed accept only means one fewer connection to destroy.
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Keeps Node from staying alive just for this listener.
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    port,
    connections: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
