/**
 * The kinds of value a setting may take: how each is parsed from its environment variable, the
 * message a bad value gets (always "<NAME> must be …"), and how the settings reference shows it.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../shared/config.js';

/** The unit of a number, as the reference names it. */
export type Unit = 'bytes' | 'ms' | 'seconds' | 'days' | 'MB' | 'pixels' | 'pages' | 'count' | 'requests';

export interface Kind<T> {
  /** What values look like, for the reference: "whole number", "true or false", "URL (postgres:, postgresql:)". */
  readonly type: string;
  readonly unit?: Unit;
  /** Inclusive bounds of a number. */
  readonly range?: { readonly min: number; readonly max: number };
  /** The value of a variable that is set (not empty); throws ConfigError naming `name`. */
  parse(raw: string, name: string): T;
  /** A value as the reference writes it. */
  show(value: T): string;
}

const MiB = 1024 * 1024;

/** 10485760 → "10485760 (10 MiB)"; values not a whole number of KiB are shown alone. */
export function showBytes(bytes: number): string {
  for (const [size, unit] of [
    [1024 * MiB * 1024, 'TiB'],
    [1024 * MiB, 'GiB'],
    [MiB, 'MiB'],
    [1024, 'KiB'],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes} (${bytes / size} ${unit})`;
  }
  return String(bytes);
}

function parseWhole(raw: string, name: string, min: number, max: number): number {
  const text = raw.trim();
  if (!/^\d+$/.test(text))
    throw new ConfigError(`${name} must be a whole number between ${min} and ${max}; got "${raw}"`);
  const value = Number(text);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}; got ${value}`);
  return value;
}

/** A whole number within [min, max]. */
export function whole(min: number, max: number, unit: Unit = 'count'): Kind<number> {
  return {
    type: 'whole number',
    unit,
    range: { min, max },
    parse: (raw, name) => parseWhole(raw, name, min, max),
    show: (value) => (unit === 'bytes' ? showBytes(value) : String(value)),
  };
}

/** A number of bytes within [min, max]. */
export function bytes(min: number, max: number): Kind<number> {
  return whole(min, max, 'bytes');
}

/** A whole number within [min, max], or `unlimited` (null). */
export function limit(min: number, max: number, unit: Unit = 'requests'): Kind<number | null> {
  return {
    type: 'whole number or `unlimited`',
    unit,
    range: { min, max },
    parse: (raw, name) => (raw.trim().toLowerCase() === 'unlimited' ? null : parseWhole(raw, name, min, max)),
    show: (value) => (value === null ? 'unlimited' : String(value)),
  };
}

/** `true`/`false` (also 1/0, yes/no). */
export function bool(): Kind<boolean> {
  return {
    type: '`true` or `false`',
    parse(raw, name) {
      const value = raw.trim().toLowerCase();
      if (['true', '1', 'yes'].includes(value)) return true;
      if (['false', '0', 'no'].includes(value)) return false;
      throw new ConfigError(`${name} must be true or false; got "${raw}"`);
    },
    show: String,
  };
}

/** One of `values`. */
export function oneOf<const V extends string>(values: readonly V[]): Kind<V> {
  return {
    type: values.map((v) => `\`${v}\``).join(', '),
    parse(raw, name) {
      const value = raw.trim().toLowerCase();
      if ((values as readonly string[]).includes(value)) return value as V;
      throw new ConfigError(`${name} must be one of ${values.join(', ')}; got "${raw}"`);
    },
    show: String,
  };
}

/** Any text, trimmed. */
export function text(type = 'text'): Kind<string> {
  return { type, parse: (raw) => raw.trim(), show: (value) => `\`${value}\`` };
}

/** A directory, made absolute against the working directory. */
export function directory(): Kind<string> {
  return { type: 'path', parse: (raw) => resolve(raw.trim()), show: (value) => `\`${value}\`` };
}

/** A secret of at least `minLength` characters, taken as given; `hint` says how to make one. */
export function secret(minLength: number, hint = ''): Kind<string | undefined> {
  return {
    type: `text, at least ${minLength} characters`,
    parse(raw, name) {
      if (raw.length < minLength)
        throw new ConfigError(`${name} must be at least ${minLength} characters${hint ? ` ${hint}` : ''}`);
      return raw;
    },
    show: (value) => (value === undefined ? 'unset' : '(secret)'),
  };
}

/** A URL whose scheme is one of `protocols` (`postgres:`, …), kept as written. */
export function url(protocols: readonly string[]): Kind<string | undefined> {
  return {
    type: `URL (${protocols.map((p) => `\`${p}//\``).join(', ')})`,
    parse(raw, name) {
      let parsed: URL;
      try {
        parsed = new URL(raw.trim());
      } catch {
        throw new ConfigError(`${name} must be a URL (${protocols.join(', ')}); got an unparsable value`);
      }
      if (!protocols.includes(parsed.protocol)) {
        throw new ConfigError(
          `${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}; got ${parsed.protocol}//…`,
        );
      }
      return raw.trim();
    },
    show: (value) => (value === undefined ? 'unset' : `\`${value}\``),
  };
}

/** Remote resources on or off, and the hosts that may be on private addresses. */
export interface RemoteResourcePolicy {
  readonly enabled: boolean;
  /** `host` or `host:port`, lower case (IPv6 literals in brackets). */
  readonly hosts: readonly string[];
}

const HOST_ENTRY = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/;

const ON = ['on', 'true', '1', 'yes'];
const OFF = ['off', 'false', '0', 'no'];

/**
 * `on`, `off`, or `on` followed by `host[:port]` entries, commas between: `on,assets.internal:8443`
 * lets documents load from those hosts even on private addresses. The switch comes first, so a typo
 * (`of`) is refused rather than taken for a host. `true`/`false` (1/0, yes/no) are accepted for on/off.
 */
export function remoteResources(): Kind<RemoteResourcePolicy> {
  return {
    type: '`on`, `off`, or `on,host[:port],…`',
    parse(raw, name) {
      const [first = '', ...hosts] = raw.split(',').map((entry) => entry.trim().toLowerCase());
      const usage = `${name} must be on, off, or on followed by host or host:port entries separated by commas (for example on,assets.internal:8443)`;
      if (!ON.includes(first) && !OFF.includes(first)) throw new ConfigError(`${usage}; got "${raw}"`);
      if (OFF.includes(first) && hosts.length > 0)
        throw new ConfigError(`${usage}; hosts make no sense with off; got "${raw}"`);
      const bad = hosts.find((host) => !HOST_ENTRY.test(host) || ON.includes(host) || OFF.includes(host));
      if (bad !== undefined) throw new ConfigError(`${usage}; got "${bad}"`);
      return { enabled: ON.includes(first), hosts };
    },
    show: (value) => (value.enabled ? (value.hosts.length > 0 ? `\`on,${value.hosts.join(',')}\`` : '`on`') : '`off`'),
  };
}
