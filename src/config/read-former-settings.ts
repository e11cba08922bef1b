/**
 * What start-up does with a former setting still set (former-settings.ts): carry its value over to
 * its replacement, keep a stricter bound, or say that it is ignored and what applies. Each one set
 * gets one warning line; none is dropped without a word (issue 50 point 5).
 */
import type { Config } from '../shared/config.js';
import { FORMER_SETTINGS, type FormerSetting, type KeptBound } from './former-settings.js';
import { showBytes } from './setting-kinds.js';
import { SETTINGS } from './settings.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Ends each warning. */
const SEE = '; see docs/settings.md "Former settings".';

const isSet = (raw: string | undefined): raw is string => raw !== undefined && raw.trim() !== '';

/** A value in its unit, as the warnings write it. */
function show(value: number, unit: KeptBound['unit']): string {
  switch (unit) {
    case 'bytes':
      return showBytes(value);
    case 'ms':
      return `${value} ms`;
    case 'seconds':
      return `${value} s`;
    case 'MB':
      return `${value} MB`;
    default:
      return String(value);
  }
}

/**
 * The environment the settings are parsed from: each former setting whose meaning carries over is
 * read as its replacement (former-settings.ts `carry`). Throws ConfigError naming the former variable
 * when its value is not valid there.
 */
export function carryOverFormerSettings(env: Env): { env: Env; warnings: string[] } {
  const carried: Record<string, string | undefined> = { ...env };
  const outcomes = new Map<string, { read: string[]; overridden: string[] }>();
  for (const former of FORMER_SETTINGS) {
    const raw = env[former.name];
    if (!former.carry || !former.replacedBy || !isSet(raw)) continue;
    const target = former.replacedBy;
    const before = carried[target];
    const current = isSet(before) ? { raw: before, byOperator: before === env[target] } : undefined;
    const value = former.carry(raw, current);
    const outcome = outcomes.get(target) ?? { read: [], overridden: [] };
    outcomes.set(target, outcome);
    if (value === undefined) {
      outcome.overridden.push(former.name);
      continue;
    }
    SETTINGS.find((s) => s.name === target)!.kind.parse(value, `${former.name} (read as ${target})`);
    carried[target] = value;
    outcome.read.push(former.name);
  }
  const warnings: string[] = [];
  for (const [target, { read, overridden }] of outcomes) {
    if (read.length > 0) {
      const which = read.length === 1 ? `${read[0]} is a former setting` : `${read.join(' and ')} are former settings`;
      warnings.push(`${which}: read as ${target}=${carried[target]}; set that instead${SEE}`);
    }
    for (const name of overridden)
      warnings.push(`${name} is a former setting, ignored: ${target} is set too and applies; unset ${name}${SEE}`);
  }
  return { env: carried, warnings };
}

/** A former bound's value, or the reason it is not one. */
function parseBound(raw: string, { min, max }: KeptBound): number | string {
  const text = raw.trim();
  const value = Number(text);
  const range =
    max === Number.MAX_SAFE_INTEGER ? `a whole number of at least ${min}` : `a whole number from ${min} to ${max}`;
  return /^\d+$/.test(text) && value >= min && value <= max ? value : `"${raw}" is not ${range}`;
}

const valueAt = (config: Config, path: string): number =>
  path.split('.').reduce<any>((node, key) => node[key], config) as number;

/** `{a: {b: value}}` for `a.b`. */
function nested(path: string, value: number): Record<string, unknown> {
  return path
    .split('.')
    .reduceRight<Record<string, unknown>>(
      (inner, key) => ({ [key]: inner }),
      value as unknown as Record<string, unknown>,
    );
}

/** The warning about one former constant set to `raw`, and the bound it keeps, if any. */
function judgeConstant(
  former: FormerSetting,
  raw: string,
  config: Config,
): { warning: string; kept?: Record<string, unknown> } {
  const fixedIn = former.where ? ` in ${former.where}` : '';
  if (!former.keep) {
    const applies = former.applies ? `${former.now} (here ${former.applies(config)})` : former.now;
    return {
      warning: `${former.name} is a former setting, ignored: ${former.where ? `now fixed, ${applies},${fixedIn}` : applies}${SEE}`,
    };
  }
  const { path, unit } = former.keep;
  const fixed = valueAt(config, path);
  const value = parseBound(raw, former.keep);
  if (typeof value === 'string') {
    return {
      warning: `${former.name} is a former setting, ignored: ${value}; the bound fixed${fixedIn}, ${show(fixed, unit)}, applies${SEE}`,
    };
  }
  if (value >= fixed) {
    return {
      warning: `${former.name}=${value} is a former setting, ignored: the bound fixed${fixedIn}, ${show(fixed, unit)}, applies; only a lower value is kept${SEE}`,
    };
  }
  return {
    warning: `${former.name}=${value} is a former setting, kept: the bound fixed${fixedIn} is at most ${show(fixed, unit)} and yours is lower, so ${show(value, unit)} applies; unset it to take the fixed bound${SEE}`,
    kept: nested(path, value),
  };
}

/**
 * Former settings that became constants, judged against the loaded `config`: a lower value of a
 * bound is kept (returned as overrides of `config`), anything else is reported with what applies.
 */
export function keepStricterBounds(
  env: Env,
  config: Config,
): { overrides: Record<string, unknown>[]; warnings: string[] } {
  const overrides: Record<string, unknown>[] = [];
  const warnings: string[] = [];
  for (const former of FORMER_SETTINGS) {
    const raw = env[former.name];
    if (former.carry || !isSet(raw)) continue;
    const { warning, kept } = judgeConstant(former, raw, config);
    warnings.push(warning);
    if (kept) overrides.push(kept);
  }
  return { overrides, warnings };
}

/** True when `name` is a former setting start-up still reads (carried over, or a bound kept when lower). */
export function isReadFormerSetting(name: string): boolean {
  return FORMER_SETTINGS.some((f) => f.name === name && (f.carry !== undefined || f.keep !== undefined));
}
