/**
 * A real HTTP webhook receiver on loopback. It records every request's raw body bytes and headers and
 * answers from a script (e.g. 500, 500, then 200 for ever), so tests see exactly what a customer's
 * endpoint would.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the receiver saw it. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received. */
  raw: Buffer;
  /** `raw` parsed as JSON. */
  json: any;
  receivedAt: number;
  /** The status the receiver answered. */
  answered: number;
}

/** A running receiver. */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Statuses to answer, in order; the last one repeats. Default [200]. `delayMs` holds each answer back. */
  script(statuses: number[], options?: { headers?: Record<string, string>; delayMs?: number }): void;
  /** Resolves once `count` requests matching `filter` have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, filter?: (w: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 and an ephemeral port; it answers 200 until scripted otherwise. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let statuses = [200];
  let headers: Record<string, string> = {};
  let delayMs = 0;
  let served = 0;
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = statuses[Math.min(served, statuses.length - 1)] ?? 200;
      served++;
      const raw = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
      received.push({ path: req.url ?? '', headers: req.headers, raw, json, receivedAt: Date.now(), answered: status });
      for (const w of waiters) w();
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'text/plain', ...headers });
        res.end(status < 300 ? 'ok' : 'nope');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/pressroom`,
    received,
    script(next, options = {}) {
      statuses = next;
      headers = options.headers ?? {};
      delayMs = options.delayMs ?? 0;
      served = 0;
    },
    waitFor(count, filter = () => true, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const matching = received.filter(filter);
          if (matching.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(matching);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `webhook receiver: expected ${count} requests, got ${received.filter(filter).length} within ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
