/**
 * Data binding: keys in `data` match the template's variables. A key with dots is the same as the
 * nested object (`{"customer.name": "Ada"}` ≡ `{"customer": {"name": "Ada"}}`), so no-code tools can
 * send the flat keys the fields endpoint lists. A nested value given explicitly wins over a dotted one.
 * Objects are built without prototypes' setters, so no key can reach Object.prototype.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isPlainObject(value: unknown): value is Record<string, Json> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function define(target: Record<string, Json>, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Returns a copy of `data` with dotted keys expanded into nested objects (recursively, arrays included). */
export function expandDottedKeys(data: unknown): Json {
  if (Array.isArray(data)) return data.map(expandDottedKeys);
  if (!isPlainObject(data)) return data as Json;
  const out: Record<string, Json> = {};
  const dotted: [string[], Json][] = [];
  for (const [key, value] of Object.entries(data)) {
    const expanded = expandDottedKeys(value);
    if (key.includes('.') && !key.startsWith('.') && !key.endsWith('.') && !key.includes('..')) dotted.push([key.split('.'), expanded]);
    else define(out, key, expanded);
  }
  for (const [path, value] of dotted) {
    let node = out;
    let blocked = false;
    for (const part of path.slice(0, -1)) {
      const next = Object.prototype.hasOwnProperty.call(node, part) ? node[part] : undefined;
      if (next === undefined) {
        const created: Record<string, Json> = {};
        define(node, part, created);
        node = created;
      } else if (isPlainObject(next)) {
        node = next;
      } else {
        blocked = true; // a scalar already sits there: the explicit value wins
        break;
      }
    }
    const leaf = path[path.length - 1]!;
    if (!blocked && !Object.prototype.hasOwnProperty.call(node, leaf)) define(node, leaf, value);
  }
  return out;
}
