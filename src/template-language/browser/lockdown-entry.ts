/**
 * First code of the compartment page, right after the SES bundle: `lockdown()` before any other
 * code runs, then the network and worker APIs are removed from the page's global.
 */
// overrideTaming 'severe': every Object.prototype property becomes assignable ON ITS OWN OBJECTS
// (an accessor that defines an own property on the receiver; the prototype itself stays
// frozen), so data and templates may use keys such as "constructor" or "toString" — which
// nunjucks copies into its context by assignment — without the "override mistake".
lockdown({ errorTaming: 'safe', overrideTaming: 'severe', consoleTaming: 'safe', stackFiltering: 'concise' });
// Not reachable from a compartment anyway (its global is its own); removed as defence in depth.
for (const name of [
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'WebSocketStream',
  'WebTransport',
  'EventSource',
  'Worker',
  'SharedWorker',
  'BroadcastChannel',
  'indexedDB',
  'caches',
  'open',
]) {
  for (let o: object | null = globalThis; o; o = Object.getPrototypeOf(o)) {
    try {
      delete (o as Record<string, unknown>)[name];
    } catch {
      /* not configurable */
    }
  }
}
