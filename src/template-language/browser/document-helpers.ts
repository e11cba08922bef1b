/**
 * The work behind the template helpers that need more than plain JavaScript (issue 13): locale
 * formatting with `Intl`, barcodes and QR codes with bwip-js (drawn as SVG, no network), Markdown
 * with markdown-it. `helper-filters.ts` turns them into the language's filters and globals.
 *
 * Where this runs: a document's SES Compartment has no `Intl` (and SES tames `toLocaleString` to
 * ignore its locale), so on the compartment page these functions live in the harness's realm,
 * created once per page and handed to every compartment hardened (`harness-entry.ts`). They take
 * primitives and plain options, copy what they read, and return strings only, so a document holds
 * nothing of that realm but frozen functions.
 */
import {
  azteccode,
  code128,
  code39,
  datamatrix,
  drawingSVG,
  ean13,
  ean8,
  gs1_128,
  interleaved2of5,
  itf14,
  pdf417,
  qrcode,
  swissqrcode,
  upca,
} from 'bwip-js/browser';
import MarkdownIt from 'markdown-it';

/** What the helpers need from the realm that has Intl; every answer is a string. */
export interface DocumentHelpers {
  /** `Intl.NumberFormat(locale, options).format(value)`. */
  formatNumber(value: number, locale: string, options: NumberOptions): string;
  /** `Intl.DateTimeFormat(locale, options).format(date)`; `value` is an ISO 8601 text or milliseconds. */
  formatDate(value: string | number, locale: string, options: DateOptions): string;
  /** An inline `<svg>` of the barcode `type` encoding `text`. */
  barcode(type: string, text: string, options: BarcodeOptions): string;
  /** Markdown as HTML; raw HTML in it is escaped, links only to http(s), mailto and tel. */
  markdown(text: string): string;
}

export interface NumberOptions {
  style?: 'decimal' | 'currency' | 'percent';
  currency?: string;
  minimumFractionDigits?: number;
  maximumFractionDigits?: number;
}

export interface DateOptions {
  /** `short`, `medium`, `long` or `full` (Intl's dateStyle); undefined for no date part. */
  dateStyle?: string;
  timeStyle?: string;
  /** IANA name; UTC unless given, so a document prints the same wherever it is rendered. */
  timeZone?: string;
}

export interface BarcodeOptions {
  /** Show the encoded text under a linear barcode. */
  includetext?: boolean;
  /** Bar height in millimetres (linear barcodes). */
  height?: number;
  /** Module size multiplier. */
  scale?: number;
  /** QR error correction: L, M, Q or H. */
  eclevel?: string;
  /** Printed width as a CSS length (`30mm`); otherwise the drawing's natural size. */
  width?: string;
  barcolor?: string;
  backgroundcolor?: string;
}

/** The barcode types offered, by the name templates use. */
export const BARCODE_TYPES = {
  qrcode,
  code128,
  code39,
  ean13,
  ean8,
  upca,
  itf14,
  interleaved2of5,
  gs1_128,
  datamatrix,
  pdf417,
  azteccode,
  swissqrcode,
} as const;

/** Longest text a barcode is drawn for: far above what a QR code holds (~7,000 digits). */
const MAX_BARCODE_TEXT = 8_000;
/** Longest Markdown text converted (2 MB of output is the document limit anyway). */
const MAX_MARKDOWN_TEXT = 500_000;
const CSS_LENGTH = /^\d+(\.\d+)?(px|mm|cm|in|pt|pc|em|rem|%)$/;
const COLOR = /^[0-9A-Fa-f]{6}$/;

export function createDocumentHelpers(): DocumentHelpers {
  // Captured now, before any document runs (none can reach this realm, but nothing is read late).
  const NumberFormat = Intl.NumberFormat;
  const DateTimeFormat = Intl.DateTimeFormat;
  const ParsedDate = Date;
  const hasOwn = Object.prototype.hasOwnProperty;
  const types = BARCODE_TYPES as unknown as Record<
    string,
    (opts: Record<string, unknown>, drawing: unknown) => unknown
  >;
  const markdownIt = new MarkdownIt({ html: false, linkify: true, typographer: false });
  // markdown-it already refuses javascript:, vbscript:, file: and most data: links; a printed
  // document needs only these.
  markdownIt.validateLink = (url: string) => /^(https?:|mailto:|tel:|#)/i.test(url.trim());

  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const whole = (value: unknown, min: number, max: number): number | undefined =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max ? value : undefined;

  return {
    formatNumber(value, locale, options) {
      const style = text(options.style);
      const copy: Intl.NumberFormatOptions = {
        style: style === 'currency' || style === 'percent' ? style : 'decimal',
        ...(text(options.currency) ? { currency: text(options.currency) } : {}),
        ...(whole(options.minimumFractionDigits, 0, 20) !== undefined
          ? { minimumFractionDigits: options.minimumFractionDigits }
          : {}),
        ...(whole(options.maximumFractionDigits, 0, 20) !== undefined
          ? { maximumFractionDigits: options.maximumFractionDigits }
          : {}),
      };
      return String(new NumberFormat(String(locale), copy).format(Number(value)));
    },
    formatDate(value, locale, options) {
      const date = new ParsedDate(typeof value === 'number' ? value : String(value));
      if (Number.isNaN(date.getTime()))
        throw new RangeError(`"${String(value).slice(0, 40)}" is not a date (use ISO 8601, like 2026-11-24)`);
      const copy: Intl.DateTimeFormatOptions = { timeZone: text(options.timeZone) ?? 'UTC' };
      const dateStyle = text(options.dateStyle);
      const timeStyle = text(options.timeStyle);
      if (dateStyle) copy.dateStyle = dateStyle as Intl.DateTimeFormatOptions['dateStyle'];
      if (timeStyle) copy.timeStyle = timeStyle as Intl.DateTimeFormatOptions['timeStyle'];
      return String(new DateTimeFormat(String(locale), copy).format(date));
    },
    barcode(type, value, options) {
      const name = String(type);
      const encode = hasOwn.call(types, name) ? types[name] : undefined;
      if (!encode)
        throw new RangeError(`unknown barcode type "${name.slice(0, 40)}" (one of ${Object.keys(types).join(', ')})`);
      const data = String(value);
      if (data.length === 0) throw new RangeError(`${name}: nothing to encode`);
      if (data.length > MAX_BARCODE_TEXT)
        throw new RangeError(`${name}: the text is longer than ${MAX_BARCODE_TEXT} characters`);
      const opts: Record<string, unknown> = { bcid: name, text: data, scale: 2 };
      if (typeof options.includetext === 'boolean') opts.includetext = options.includetext;
      if (typeof options.height === 'number' && options.height > 0 && options.height <= 500)
        opts.height = options.height;
      if (typeof options.scale === 'number' && options.scale > 0 && options.scale <= 20) opts.scale = options.scale;
      if (typeof options.eclevel === 'string' && /^[LMQH]$/.test(options.eclevel)) opts.eclevel = options.eclevel;
      for (const key of ['barcolor', 'backgroundcolor'] as const) {
        const color = text(options[key]);
        if (color !== undefined && COLOR.test(color.replace(/^#/, ''))) opts[key] = color.replace(/^#/, '');
      }
      let svg: string;
      try {
        svg = String(encode(opts, drawingSVG()));
      } catch (error) {
        // bwip-js names the problem in its message: "bwipp.ean13badLength#6878: EAN-13 must be 12 or 13 digits".
        const message = String((error as { message?: unknown })?.message ?? error).replace(/^bwipp\.[\w#]+:\s*/, '');
        throw new RangeError(`${name}: ${message.slice(0, 200)}`);
      }
      const width = text(options.width);
      const size = width !== undefined && CSS_LENGTH.test(width) ? `width:${width};height:auto` : undefined;
      // The drawing has only a viewBox; give it its natural size (or the one asked for) and a role.
      const natural = /viewBox="0 0 (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)"/.exec(svg);
      const attributes = size ? ` style="${size}"` : natural ? ` width="${natural[1]}" height="${natural[2]}"` : '';
      return svg.replace('<svg ', `<svg class="pressroom-barcode" role="img" aria-label="${name}"${attributes} `);
    },
    markdown(source) {
      const input = String(source);
      if (input.length > MAX_MARKDOWN_TEXT)
        throw new RangeError(`markdown: the text is longer than ${MAX_MARKDOWN_TEXT} characters`);
      return String(markdownIt.render(input));
    },
  };
}
