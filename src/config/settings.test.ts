import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../shared/config.js';
import { FORMER_SETTINGS } from './former-settings.js';
import { ignoredVariables, unknownVariablesWarning } from './ignored-variables.js';
import { settingsReference, SETTINGS_REFERENCE_COMMAND, SETTINGS_REFERENCE_PATH } from './settings-reference.js';
import { GROUPS, parseSettings, SETTINGS } from './settings.js';

/** Settings an operator is meant to change; past it, a new value is a constant beside its code (issue 38). */
const MAX_SETTINGS = 45;

describe('the settings declarations', () => {
  it(`declare at most ${MAX_SETTINGS} settings`, () => {
    expect(SETTINGS.length).toBeLessThanOrEqual(MAX_SETTINGS);
  });

  it('give every setting a PRESSROOM_ name (or PORT), one line of doc and a group, once', () => {
    const names = SETTINGS.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    for (const setting of SETTINGS) {
      expect(setting.name, setting.name).toMatch(/^(PORT|PRESSROOM_[A-Z0-9_]+)$/);
      expect(setting.doc.length, setting.name).toBeGreaterThan(10);
      expect(setting.doc, setting.name).not.toMatch(/\n/);
      expect(Object.keys(GROUPS), setting.name).toContain(setting.group);
    }
  });

  it('bound every number, and hold every default within its bounds', () => {
    const defaults = parseSettings({}, { cores: 2, memoryMb: 8192 }) as unknown as Record<string, unknown>;
    for (const setting of SETTINGS) {
      const value = defaults[setting.name];
      if (typeof value !== 'number' && setting.kind.range === undefined) continue;
      expect(setting.kind.range, `${setting.name} has no bounds`).toBeDefined();
      const { min, max } = setting.kind.range!;
      expect(Number.isSafeInteger(min) && Number.isSafeInteger(max) && min <= max, setting.name).toBe(true);
      expect(max, `${setting.name}: an upper bound, not "any number"`).toBeLessThan(Number.MAX_SAFE_INTEGER);
      if (typeof value === 'number')
        expect(value >= min && value <= max, `${setting.name} default ${value}`).toBe(true);
    }
  });

  it('say in words every default that is made from other settings or the machine', () => {
    for (const setting of SETTINGS.filter((s) => typeof s.default === 'function'))
      expect(setting.defaultDoc, setting.name).toBeTruthy();
  });

  it.each(SETTINGS.filter((s) => s.kind.range !== undefined).map((s) => [s.name, s.kind.range!] as const))(
    'refuse %s out of its bounds, or not a number, with a message naming it',
    (name, { min, max }) => {
      const setting = SETTINGS.find((s) => s.name === name)!;
      const refused = (raw: string) => {
        try {
          setting.kind.parse(raw, name);
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
          return (error as Error).message;
        }
        return undefined;
      };
      expect(refused('many')).toBe(`${name} must be a whole number between ${min} and ${max}; got "many"`);
      expect(refused(String(max + 1))).toBe(`${name} must be between ${min} and ${max}; got ${max + 1}`);
      if (min > 0) expect(refused(String(min - 1))).toBe(`${name} must be between ${min} and ${max}; got ${min - 1}`);
      expect(refused(String(min))).toBeUndefined();
      expect(refused(String(max))).toBeUndefined();
    },
  );

  it('keep former settings apart from settings, each saying what it became', () => {
    const settings = new Set(SETTINGS.map((s) => s.name));
    for (const former of FORMER_SETTINGS) {
      expect(settings.has(former.name), former.name).toBe(false);
      expect(former.now, former.name).toBeTruthy();
      if (former.replacedBy) expect(settings.has(former.replacedBy), former.name).toBe(true);
    }
  });
});

describe('variables that are not settings', () => {
  it('are named in one warning; former settings are left to their own (former-settings.test.ts)', () => {
    const env = {
      PRESSROOM_PORT: '1',
      PRESSROOM_JOB_LEASE_MS: '5000',
      PRESSROOM_SPOOL_DIR: '/tmp/x',
      PRESSROOM_RENDER_CONCURRENCY: '2',
      PORT: '80',
      HOME: '/root',
    };
    // What the service does not read at all: the typo and the former setting that is only reported.
    expect(ignoredVariables(env)).toEqual(['PRESSROOM_PORT', 'PRESSROOM_SPOOL_DIR']);
    const warning = unknownVariablesWarning(env)!;
    expect(warning).not.toMatch(/\n/);
    expect(warning).toBe('ignored environment variables: PRESSROOM_PORT (not a setting). See docs/settings.md.');
    expect(
      unknownVariablesWarning({ PRESSROOM_RENDER_CONCURRENCY: '2', PRESSROOM_JOB_LEASE_MS: '5000' }),
    ).toBeUndefined();
  });

  it('leave out the command line client’s own (pressroom generate: PRESSROOM_URL, PRESSROOM_API_KEY)', () => {
    expect(
      ignoredVariables({ PRESSROOM_URL: 'http://localhost:8080', PRESSROOM_API_KEY: 'pk_x', PRESSROOM_URLS: 'typo' }),
    ).toEqual(['PRESSROOM_URLS']);
  });
});

describe(`the settings reference (${SETTINGS_REFERENCE_PATH})`, () => {
  it('is what the declarations make', () => {
    const written = readFileSync(new URL(`../../${SETTINGS_REFERENCE_PATH}`, import.meta.url), 'utf8');
    expect(
      written === settingsReference(),
      `${SETTINGS_REFERENCE_PATH} is stale: run \`${SETTINGS_REFERENCE_COMMAND}\` and commit it`,
    ).toBe(true);
  });

  it('lists every setting and every former setting', () => {
    const reference = settingsReference();
    for (const { name } of [...SETTINGS, ...FORMER_SETTINGS]) expect(reference).toContain(`| \`${name}\` |`);
  });
});
