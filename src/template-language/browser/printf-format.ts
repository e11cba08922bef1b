/**
 * Jinja2's printf-style `format` filter, which nunjucks lacks: `"%.2f"|format(x)`,
 * `"%s and %s"|format(a, b)`, `"%(n)d items"|format(n=3)`; flags `- + space 0`, width, precision.
 */
const FORMAT_SPEC = /%(?:\(([^)]*)\))?([-+ 0]*)(\d*)(?:\.(\d+))?([sdifFeExXoc%])/g;
const hasOwn = Object.prototype.hasOwnProperty;

/** nunjucks passes keyword arguments as a last object marked `__keywords`. */
export function splitKeywords(args: unknown[]): { positional: unknown[]; named: Record<string, unknown> | null } {
  const last = args[args.length - 1] as { __keywords?: boolean } | undefined;
  if (last && typeof last === 'object' && last.__keywords)
    return { positional: args.slice(0, -1), named: last as Record<string, unknown> };
  return { positional: args, named: null };
}

export function printfFormat(fmt: unknown, ...rest: unknown[]): string {
  const { positional: args, named } = splitKeywords(rest);
  let next = 0;
  return String(fmt).replace(
    FORMAT_SPEC,
    (_all, key: string | undefined, flags: string, width: string, precision: string | undefined, conv: string) => {
      if (conv === '%') return '%';
      const value = key !== undefined ? (named && hasOwn.call(named, key) ? named[key] : undefined) : args[next++];
      const number = Number(value);
      const isNumber = 'sc'.indexOf(conv) < 0;
      const digits = precision === undefined ? 6 : Number(precision);
      let text: string;
      if (conv === 's') text = precision === undefined ? String(value) : String(value).slice(0, digits);
      else if (conv === 'c') text = typeof value === 'number' ? String.fromCharCode(value) : String(value);
      else if (conv === 'd' || conv === 'i') text = String(Math.abs(Math.trunc(number)));
      else if (conv === 'f' || conv === 'F') text = Math.abs(number).toFixed(digits);
      else if (conv === 'e' || conv === 'E')
        text = Math.abs(number)
          .toExponential(digits)
          .replace(/e([+-])(\d)$/, 'e$10$2');
      else text = Math.abs(Math.trunc(number)).toString(conv === 'o' ? 8 : 16);
      if (conv === 'X' || conv === 'E' || conv === 'F') text = text.toUpperCase();
      if (isNumber)
        text = (number < 0 ? '-' : flags.indexOf('+') >= 0 ? '+' : flags.indexOf(' ') >= 0 ? ' ' : '') + text;
      const pad = Number(width || 0) - text.length;
      if (pad <= 0) return text;
      if (flags.indexOf('-') >= 0) return text + ' '.repeat(pad);
      if (isNumber && flags.indexOf('0') >= 0 && isFinite(number))
        return text.replace(/^([-+ ]?)/, '$1' + '0'.repeat(pad));
      return ' '.repeat(pad) + text;
    },
  );
}
