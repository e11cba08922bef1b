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

/** The value at a dotted key of data as `expandDottedKeys` left it (own properties only), or undefined. */
export function valueAt(bound: unknown, key: string): unknown {
  let value = bound;
  for (const part of key.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part))
      return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * `data` with dotted keys expanded into nested objects (recursively, arrays included). What holds no
 * dotted key is returned as it is, not copied: the data of most documents has none, and copying it
 * property by property cost more than anything else the binding does.
 */
export function expandDottedKeys(data: unknown): Json {
  if (Array.isArray(data)) {
    let copy: Json[] | undefined;
    for (let i = 0; i < data.length; i++) {
      const expanded = expandDottedKeys(data[i]);
      if (expanded !== data[i]) (copy ??= data.slice())[i] = expanded;
    }
    return copy ?? (data as Json[]);
  }
  if (!isPlainObject(data)) return data as Json;
  // The copy starts at the first key that needs one (a dotted key, or a value that changed).
  let out: Record<string, Json> | undefined;
  const dotted: [string[], Json][] = [];
  const keys = Object.keys(data);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const value = data[key]!;
    const expanded = expandDottedKeys(value);
    const isDotted = key.includes('.') && !key.startsWith('.') && !key.endsWith('.') && !key.includes('..');
    if (out === undefined) {
      if (expanded === value && !isDotted) continue;
      out = {};
      for (let j = 0; j < i; j++) define(out, keys[j]!, data[keys[j]!]!);
    }
    if (isDotted) dotted.push([key.split('.'), expanded]);
    else define(out, key, expanded);
  }
  if (out === undefined) return data;
  // Objects this call made, which the dotted keys may fill; one of the caller's is copied first.
  const own = new Set<object>([out]);
  for (const [path, value] of dotted) {
    let node = out;
    let blocked = false;
    for (const part of path.slice(0, -1)) {
      const next = Object.prototype.hasOwnProperty.call(node, part) ? node[part] : undefined;
      if (next === undefined) {
        const created: Record<string, Json> = {};
        define(node, part, created);
        own.add(created);
        node = created;
      } else if (isPlainObject(next)) {
        if (!own.has(next)) {
          const copy: Record<string, Json> = {};
          for (const key of Object.keys(next)) define(copy, key, next[key]!);
          define(node, part, copy);
          own.add(copy);
          node = copy;
        } else {
          node = next;
        }
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
