/**
 * The template helpers real documents need (issue 13), as filters and globals of the language:
 * locale-aware numbers, currencies, percentages and dates, barcodes and QR codes (a SEPA payment
 * code among them), and Markdown. The work is done by `DocumentHelpers` (`document-helpers.ts`),
 * which lives where `Intl` is; this file reads the template's arguments Jinja2's way and decides
 * what a value that does not fit becomes (a warning, or an error naming the problem; in a strict
 * template a number or date that does not fit is an error too).
 */
import type { DocumentHelpers, NumberOptions } from './document-helpers.js';
import type { Nunjucks, NunjucksEnvironment } from './nunjucks-types.js';
import { splitKeywords } from './printf-format.js';

/** How the language reports what a document's data got wrong (`language.ts`). */
export interface Report {
  /** A warning of the document being evaluated (each distinct one is kept once). */
  warn(code: string, message: string): void;
  /**
   * A value of the data that does not fit: the `warning` (the document goes on), or in a strict
   * template an error with the `error` text (the document fails).
   */
  invalid(code: string, texts: { warning: string; error: string }): void;
}

/** A filter's `this`: nunjucks' context, which can look up a variable of the data or a `{% set %}`. */
type FilterThis = { lookup?: (name: string) => unknown } | undefined;

const DEFAULT_LOCALE = 'en-US';
const DATE_STYLES = new Set(['short', 'medium', 'long', 'full']);
/** A number written as JSON would write it (no grouping, a point for decimals). */
const NUMERIC_TEXT = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** The locale to use: the argument, else the document's `locale` variable, else en-US; `de_DE` is taken as `de-DE`. */
function localeOf(context: FilterThis, given: unknown): string {
  const value = given ?? (context && typeof context.lookup === 'function' ? context.lookup('locale') : undefined);
  return typeof value === 'string' && value.trim() !== '' ? value.trim().replace(/_/g, '-') : DEFAULT_LOCALE;
}

export function installHelperFilters(
  nj: Nunjucks,
  env: NunjucksEnvironment,
  helpers: DocumentHelpers,
  report: Report,
): void {
  const markSafe = nj.runtime.markSafe;

  /** The number in `value`, or undefined (after a warning when there was something else). */
  const numberOf = (filter: string, value: unknown): number | undefined => {
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    if (typeof value === 'string' && NUMERIC_TEXT.test(value.trim())) return Number(value.trim());
    const problem = `${filter}: ${JSON.stringify(String(value)).slice(0, 60)} is not a number`;
    const hint = 'send numbers as JSON numbers, like 1234.56';
    report.invalid('INVALID_NUMBER', {
      warning: `${problem}, printed as it is (${hint})`,
      error: `${problem} (${hint})`,
    });
    return undefined;
  };
  /** What a filter prints for a value it could not format: the value itself, or nothing. */
  const asGiven = (value: unknown) => (value === undefined || value === null ? '' : value);
  const digits = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? value : undefined);
  const number = (filter: string, value: unknown, locale: string, options: NumberOptions) => {
    const n = numberOf(filter, value);
    return n === undefined ? asGiven(value) : helpers.formatNumber(n, locale, options);
  };

  env.addFilter('format_number', function (this: FilterThis, value: unknown, ...rest: unknown[]) {
    const { positional, named } = splitKeywords(rest);
    const decimals = digits(named?.decimals ?? positional[1]);
    const options: NumberOptions =
      decimals === undefined ? {} : { minimumFractionDigits: decimals, maximumFractionDigits: decimals };
    return number('format_number', value, localeOf(this, named?.locale ?? positional[0]), options);
  });
  env.addFilter('format_currency', function (this: FilterThis, value: unknown, ...rest: unknown[]) {
    const { positional, named } = splitKeywords(rest);
    const given =
      named?.currency ??
      positional[0] ??
      (this && typeof this.lookup === 'function' ? this.lookup('currency') : undefined);
    if (typeof given !== 'string' || !/^[A-Za-z]{3}$/.test(given)) {
      throw new Error(
        `format_currency needs a currency code such as "EUR" (an argument, or a "currency" variable); got ${JSON.stringify(given ?? null)}`,
      );
    }
    const decimals = digits(named?.decimals ?? positional[2]);
    const options: NumberOptions = {
      style: 'currency',
      currency: given.toUpperCase(),
      ...(decimals === undefined ? {} : { minimumFractionDigits: decimals, maximumFractionDigits: decimals }),
    };
    return number('format_currency', value, localeOf(this, named?.locale ?? positional[1]), options);
  });
  env.addFilter('format_percent', function (this: FilterThis, value: unknown, ...rest: unknown[]) {
    const { positional, named } = splitKeywords(rest);
    const decimals = digits(named?.decimals ?? positional[1]) ?? 0;
    return number('format_percent', value, localeOf(this, named?.locale ?? positional[0]), {
      style: 'percent',
      minimumFractionDigits: decimals,
      maximumFractionDigits: decimals,
    });
  });
  const dateFilter = (name: string, withTime: boolean) =>
    function (this: FilterThis, value: unknown, ...rest: unknown[]) {
      const { positional, named } = splitKeywords(rest);
      if (value === undefined || value === null || value === '') return '';
      const style = named?.format ?? positional[0] ?? 'medium';
      if (typeof style !== 'string' || !DATE_STYLES.has(style))
        throw new Error(`${name}: the format is one of short, medium, long, full; got ${JSON.stringify(style)}`);
      const timeZone = named?.timezone ?? positional[2];
      if (typeof value !== 'string' && typeof value !== 'number') {
        const problem = `${name}: ${JSON.stringify(String(value)).slice(0, 60)} is not a date`;
        const hint = 'send ISO 8601 text, like "2026-11-24"';
        report.invalid('INVALID_DATE', {
          warning: `${problem}, printed as it is (${hint})`,
          error: `${problem} (${hint})`,
        });
        return asGiven(value);
      }
      try {
        return helpers.formatDate(value, localeOf(this, named?.locale ?? positional[1]), {
          dateStyle: style,
          ...(withTime ? { timeStyle: style === 'full' ? 'long' : style } : {}),
          ...(typeof timeZone === 'string' ? { timeZone } : {}),
        });
      } catch (error) {
        const message = String((error as { message?: unknown })?.message ?? error);
        if (!/is not a date/.test(message)) throw error;
        report.invalid('INVALID_DATE', {
          warning: `${name}: ${message}; printed as it is`,
          error: `${name}: ${message}`,
        });
        return asGiven(value);
      }
    };
  env.addFilter('format_date', dateFilter('format_date', false));
  env.addFilter('format_datetime', dateFilter('format_datetime', true));

  /** Keyword options of a barcode call, as plain values. */
  const barcodeOptions = (named: Record<string, unknown> | null) => {
    const options: Record<string, unknown> = {};
    for (const key of ['includetext', 'height', 'scale', 'eclevel', 'width', 'barcolor', 'backgroundcolor']) {
      if (named && named[key] !== undefined) options[key] = named[key];
    }
    return options;
  };
  const draw = (type: string, value: unknown, named: Record<string, unknown> | null) => {
    if (value === undefined || value === null || value === '') {
      report.warn('EMPTY_BARCODE', `${type}: no value to encode; nothing printed`);
      return '';
    }
    return markSafe(helpers.barcode(type, String(value), barcodeOptions(named)));
  };
  env.addFilter('barcode', (value: unknown, ...rest: unknown[]) => {
    const { positional, named } = splitKeywords(rest);
    const type = named?.type ?? positional[0] ?? 'code128';
    return draw(String(type), value, named);
  });
  env.addFilter('qrcode', (value: unknown, ...rest: unknown[]) => draw('qrcode', value, splitKeywords(rest).named));
  env.addGlobal('sepa_qrcode', (...args: unknown[]) => {
    const { named } = splitKeywords(args);
    return markSafe(helpers.barcode('qrcode', sepaPayload(named ?? {}), { eclevel: 'M', ...barcodeOptions(named) }));
  });
  env.addFilter('markdown', (value: unknown) =>
    value === undefined || value === null ? '' : markSafe(helpers.markdown(String(value))),
  );
}

/**
 * The EPC QR code's text (EPC069-12 version 002, "GiroCode"): a SEPA credit transfer a banking app
 * fills in when the code is scanned. Checked here so a wrong one fails the document, not the payer.
 */
export function sepaPayload(named: Record<string, unknown>): string {
  const field = (key: string) => (named[key] === undefined || named[key] === null ? '' : String(named[key]).trim());
  const iban = field('iban').replace(/\s+/g, '').toUpperCase();
  const name = field('name');
  const bic = field('bic').replace(/\s+/g, '').toUpperCase();
  const reference = field('reference');
  const text = field('text');
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban))
    throw new Error(`sepa_qrcode: "${iban.slice(0, 40)}" is not an IBAN`);
  if (name === '' || name.length > 70)
    throw new Error('sepa_qrcode: name (the payee) is required, at most 70 characters');
  if (bic !== '' && !/^[A-Z0-9]{8}([A-Z0-9]{3})?$/.test(bic))
    throw new Error(`sepa_qrcode: "${bic.slice(0, 20)}" is not a BIC`);
  if (reference.length > 35) throw new Error('sepa_qrcode: reference is at most 35 characters');
  if (text.length > 140) throw new Error('sepa_qrcode: text is at most 140 characters');
  if (reference !== '' && text !== '')
    throw new Error('sepa_qrcode: give a reference or a text, not both (the EPC code holds one)');
  let amount = '';
  if (field('amount') !== '') {
    const value = Number(field('amount'));
    if (!Number.isFinite(value) || value < 0.01 || value > 999_999_999.99)
      throw new Error(
        `sepa_qrcode: amount must be between 0.01 and 999999999.99; got "${field('amount').slice(0, 20)}"`,
      );
    amount = `EUR${value.toFixed(2)}`;
  }
  // Service tag, version, UTF-8, SEPA credit transfer, BIC, name, IBAN, amount, purpose, reference, text.
  return ['BCD', '002', '1', 'SCT', bic, name, iban, amount, '', reference, text].join('\n').replace(/\n+$/, '');
}
