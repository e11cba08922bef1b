/**
 * Runs in a document's fresh Web Worker (the `worker` evaluator), after nunjucks-slim: renders the
 * one document it is sent, posts the result and is terminated by the harness.
 */
import { createDocumentHelpers } from './document-helpers.js';
import { createDocumentRenderer } from './document-runtime.js';
import type { Nunjucks } from './nunjucks-types.js';

interface WorkerScope {
  nunjucks: Nunjucks;
  postMessage(message: unknown): void;
  onmessage: ((event: MessageEvent) => void) | null;
}

const scope = self as unknown as WorkerScope;
const renderer = createDocumentRenderer<string>(scope.nunjucks, createDocumentHelpers());
const post = scope.postMessage.bind(scope);
const makeFunction = Function;
// Defence in depth only: the page's CSP (connect-src 'none'), request interception and the proxy
// sinkhole already stop traffic; without these APIs a template does not even get to try.
for (const name of [
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'WebSocketStream',
  'WebTransport',
  'EventSource',
  'importScripts',
  'Worker',
  'SharedWorker',
  'BroadcastChannel',
  'indexedDB',
  'caches',
  'nunjucks',
]) {
  for (let o: object | null = scope; o; o = Object.getPrototypeOf(o)) {
    try {
      delete (o as Record<string, unknown>)[name];
    } catch {
      /* not configurable */
    }
  }
}
scope.onmessage = (event) => {
  scope.onmessage = null;
  const msg = event.data as { templates: Record<string, string>; data: string; limit: number; strict: boolean };
  post(renderer.renderParts(msg.templates, (code) => makeFunction(code)(), msg.data, msg.limit, msg.strict === true));
};
post('ready');
