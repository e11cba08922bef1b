/**
 * Jinja2 built-ins nunjucks lacks or implements in part (issue 13: templates come from TemplateFox
 * and Flask users): `map`, `selectattr`/`rejectattr` with a test, `tojson`, `items`, `unique`, `min`,
 * `max`, `dictsort`'s siblings, `xmlattr`, `wordwrap`, `filesizeformat`, the missing tests, and the
 * `dict` and `namespace` globals (with `{% set ns.attr = … %}`, which `../compiler.ts` turns into a
 * call of NAMESPACE_SETTER). Jinja2's semantics, documented in docs/templates.md.
 */
import type { Nunjucks, NunjucksEnvironment } from './nunjucks-types.js';
import { splitKeywords } from './printf-format.js';

/** The global `{% set ns.attr = value %}` compiles to a call of (see `../compiler.ts`). */
export const NAMESPACE_SETTER = '__pressroom_namespace_set';

type Context = {
  env: NunjucksEnvironment & {
    getTest(name: string): (...a: unknown[]) => boolean;
    getFilter(name: string): (...a: unknown[]) => unknown;
  };
};
type Item = Record<string, unknown>;

const hasOwn = Object.prototype.hasOwnProperty;
const toList = (value: unknown): unknown[] =>
  Array.isArray(value)
    ? value
    : typeof value === 'string'
      ? [...value]
      : value && typeof value === 'object'
        ? Object.keys(value)
        : [];

/** `a.b.c` (Jinja2's dotted attribute, digits index lists) of `item`, or undefined. */
function attribute(item: unknown, path: string): unknown {
  let value = item;
  for (const part of String(path).split('.')) {
    if (value === null || value === undefined) return undefined;
    value = (value as Item)[part];
  }
  return value;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
const comparable = (value: unknown, caseSensitive: boolean) =>
  !caseSensitive && typeof value === 'string' ? value.toLowerCase() : value;

export function installJinja2Additions(nj: Nunjucks, env: NunjucksEnvironment): void {
  const markSafe = nj.runtime.markSafe;
  const namespaces = new WeakSet<object>();
  const testCall = (ctx: Context, name: string, value: unknown, args: unknown[]) =>
    ctx.env.getTest(name).call(ctx, value, ...args);

  env.addFilter('map', function (this: Context, seq: unknown, ...rest: unknown[]) {
    const { positional, named } = splitKeywords(rest);
    if (named && typeof named.attribute === 'string') {
      const name = named.attribute;
      return toList(seq).map((item) => {
        const value = attribute(item, name);
        return value === undefined && hasOwn.call(named, 'default') ? named.default : value;
      });
    }
    const [filterName, ...args] = positional;
    const filter = this.env.getFilter(String(filterName));
    return toList(seq).map((item) => filter.call(this, item, ...args));
  });
  for (const [name, keep] of [
    ['selectattr', true],
    ['rejectattr', false],
  ] as const) {
    env.addFilter(name, function (this: Context, seq: unknown, attr: string, testName?: string, ...args: unknown[]) {
      return toList(seq).filter((item) => {
        const value = attribute(item, attr);
        return (testName === undefined ? !!value : testCall(this, testName, value, args)) === keep;
      });
    });
  }
  env.addFilter('tojson', (value: unknown, indent?: number) => {
    // HTML-safe as in Jinja2: <, >, & and ' are \u escapes, so the result fits in a <script> or an attribute.
    const text =
      JSON.stringify(value === undefined ? null : value, null, typeof indent === 'number' ? indent : undefined) ??
      'null';
    return markSafe(text.replace(/[<>&']/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  });
  env.addFilter('items', (value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.keys(value).map((k) => [k, (value as Item)[k]])
      : [],
  );
  env.addFilter('unique', (seq: unknown, ...rest: unknown[]) => {
    const { positional, named } = splitKeywords(rest);
    const caseSensitive = Boolean(named?.case_sensitive ?? positional[0] ?? false);
    const attr = (named?.attribute ?? positional[1]) as string | undefined;
    const seen = new Set<unknown>();
    return toList(seq).filter((item) => {
      const key = comparable(attr === undefined ? item : attribute(item, attr), caseSensitive);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  });
  for (const [name, sign] of [
    ['min', -1],
    ['max', 1],
  ] as const) {
    env.addFilter(name, (seq: unknown, ...rest: unknown[]) => {
      const { positional, named } = splitKeywords(rest);
      const caseSensitive = Boolean(named?.case_sensitive ?? positional[0] ?? false);
      const attr = (named?.attribute ?? positional[1]) as string | undefined;
      let best: unknown;
      let bestKey: any;
      for (const item of toList(seq)) {
        const key: any = comparable(attr === undefined ? item : attribute(item, attr), caseSensitive);
        if (best === undefined || (sign > 0 ? key > bestKey : key < bestKey)) {
          best = item;
          bestKey = key;
        }
      }
      return best;
    });
  }
  env.addFilter('sum', (seq: unknown, ...rest: unknown[]) => {
    const { positional, named } = splitKeywords(rest);
    const attr = (named?.attribute ?? positional[0]) as string | undefined;
    let total = Number(named?.start ?? positional[1] ?? 0);
    for (const item of toList(seq)) total += Number(attr === undefined || attr === null ? item : attribute(item, attr));
    return total;
  });
  env.addFilter('count', (value: unknown) =>
    value === null || value === undefined
      ? 0
      : typeof value === 'object' && !Array.isArray(value)
        ? Object.keys(value).length
        : ((value as { length?: number }).length ?? 0),
  );
  env.addFilter('attr', (value: unknown, name: string) =>
    value === null || value === undefined ? undefined : (value as Item)[name],
  );
  env.addFilter('xmlattr', (value: unknown, autospace = true) => {
    const parts: string[] = [];
    for (const [key, v] of Object.entries((value ?? {}) as Item)) {
      if (v === null || v === undefined) continue;
      if (/[\s/>=]/.test(key)) throw new Error(`Invalid character in attribute name: "${key}"`);
      parts.push(`${escapeHtml(key)}="${escapeHtml(String(v))}"`);
    }
    const text = parts.join(' ');
    return markSafe(autospace && text ? ` ${text}` : text);
  });
  env.addFilter('wordwrap', (value: unknown, width = 79, breakLongWords = true, wrapString = '\n') => {
    const lines: string[] = [];
    for (const paragraph of String(value).split('\n')) {
      let line = '';
      for (let word of paragraph.split(/ +/)) {
        while (breakLongWords && word.length > width) {
          if (line) lines.push(line), (line = '');
          lines.push(word.slice(0, width));
          word = word.slice(width);
        }
        if (!line) line = word;
        else if (line.length + 1 + word.length <= width) line += ` ${word}`;
        else lines.push(line), (line = word);
      }
      lines.push(line);
    }
    return lines.join(String(wrapString));
  });
  env.addFilter('filesizeformat', (value: unknown, binary = false) => {
    const bytes = Number(value);
    const base = binary ? 1024 : 1000;
    const prefixes = binary
      ? ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB']
      : ['kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
    if (bytes === 1) return '1 Byte';
    if (bytes < base) return `${bytes} Bytes`;
    let unit = base;
    for (let i = 0; i < prefixes.length; i++) {
      unit = base ** (i + 2);
      if (bytes < unit || i === prefixes.length - 1) return `${((base * bytes) / unit).toFixed(1)} ${prefixes[i]}`;
    }
    return `${bytes} Bytes`;
  });

  const tests: Record<string, (value: unknown, ...args: unknown[]) => boolean> = {
    boolean: (v) => typeof v === 'boolean',
    false: (v) => v === false,
    true: (v) => v === true,
    none: (v) => v === null,
    integer: (v) => typeof v === 'number' && Number.isInteger(v),
    float: (v) => typeof v === 'number' && !Number.isInteger(v),
    sequence: (v) => typeof v === 'string' || Array.isArray(v) || (!!v && typeof v === 'object'),
    filter: (v) => typeof v === 'string' && hasOwn.call(env.filters, v),
    test: (v) => typeof v === 'string' && hasOwn.call(env.tests, v),
  };
  for (const [name, fn] of Object.entries(tests)) env.addTest!(name, fn);

  /** `dict(a=1)` and `namespace(total=0)`: objects from keyword arguments. */
  const fromKeywords = (args: unknown[]): Item => {
    const { positional, named } = splitKeywords(args);
    const out: Item = {};
    for (const source of [positional[0], named]) {
      if (!source || typeof source !== 'object') continue;
      for (const key of Object.keys(source))
        if (key !== '__keywords')
          Object.defineProperty(out, key, {
            value: (source as Item)[key],
            enumerable: true,
            writable: true,
            configurable: true,
          });
    }
    return out;
  };
  env.addGlobal('dict', (...args: unknown[]) => fromKeywords(args));
  env.addGlobal('namespace', (...args: unknown[]) => {
    const ns = fromKeywords(args);
    namespaces.add(ns);
    return ns;
  });
  env.addGlobal(NAMESPACE_SETTER, (ns: unknown, name: string, value: unknown) => {
    if (!ns || typeof ns !== 'object' || !namespaces.has(ns))
      throw new Error(`Cannot set "${name}": only attributes of a namespace() can be set`);
    Object.defineProperty(ns, name, { value, enumerable: true, writable: true, configurable: true });
    return '';
  });
}
