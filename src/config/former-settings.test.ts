/**
 * A former setting still set after an upgrade (issue 50 point 5): its meaning carries over, or a
 * stricter bound is kept, or it is reported with what applies; every one is named in a warning.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FORMER_SETTINGS, type FormerSetting } from './former-settings.js';
import { ConfigError, loadConfig, type Config } from './load-config.js';

const MACHINE = { cores: 8, memoryMb: 16_384 };
const base = () => ({ PRESSROOM_DATA_DIR: mkdtempSync(join(tmpdir(), 'pressroom-former-')) });

/** The config `env` loads to, and the warnings start-up gives. */
function load(env: Record<string, string>): { config: Config; warnings: string[] } {
  const warnings: string[] = [];
  const config = loadConfig({ ...base(), ...env }, { machine: MACHINE, onWarning: (w) => warnings.push(w) });
  return { config, warnings };
}

const valueAt = (config: Config, path: string): number => path.split('.').reduce<any>((node, key) => node[key], config);
/** The config without its data directory (and what derives from it), to compare two loads. */
const comparable = (config: Config) => ({
  ...config,
  dataDir: '',
  database: { ...config.database, sqlitePath: '' },
  storage: { ...config.storage, url: '', spoolDir: '' },
  secretKey: '',
});

const kept = FORMER_SETTINGS.filter(
  (f): f is FormerSetting & { keep: NonNullable<FormerSetting['keep']> } => f.keep !== undefined,
);
const reported = FORMER_SETTINGS.filter((f) => !f.keep && !f.carry);

describe('former settings', () => {
  it('each has one translation: carried over to its replacement, a bound kept when lower, or reported (a constant that is no bound, or gone)', () => {
    const defaults = load({}).config;
    for (const former of FORMER_SETTINGS) {
      const gone = !former.carry && !former.keep && former.where === undefined;
      const ways = [former.carry !== undefined, former.keep !== undefined, former.notBound !== undefined, gone].filter(
        Boolean,
      );
      expect(ways, former.name).toHaveLength(1);
      if (former.carry) expect(former.replacedBy, former.name).toMatch(/^PRESSROOM_/);
      if (former.keep) expect(typeof valueAt(defaults, former.keep.path), former.name).toBe('number');
    }
  });

  it.each(kept.map((f) => [f.name, f] as const))(
    '%s: a lower value is kept as the bound, a higher one and a bad one are not',
    (name, former) => {
      const { path, min } = former.keep;
      const fixed = valueAt(load({}).config, path);
      expect(fixed, 'the fixed bound leaves room for a lower one').toBeGreaterThan(min);
      const lower = Math.max(min, Math.floor(fixed / 2));

      const stricter = load({ [name]: String(lower) });
      expect(valueAt(stricter.config, path)).toBe(lower);
      expect(stricter.warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            `^${name}=${lower} is a former setting, kept: the bound fixed in .* is at most .* and yours is lower, so .* applies`,
          ),
        ),
      ]);

      const looser = load({ [name]: String(fixed + 1) });
      expect(valueAt(looser.config, path)).toBe(fixed);
      expect(looser.warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            `^${name}=${fixed + 1} is a former setting, ignored: the bound fixed in .*, .*, applies; only a lower value is kept`,
          ),
        ),
      ]);

      const bad = load({ [name]: 'lots' });
      expect(valueAt(bad.config, path)).toBe(fixed);
      expect(bad.warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            `^${name} is a former setting, ignored: "lots" is not a whole number .*; the bound fixed in .*, .*, applies`,
          ),
        ),
      ]);
    },
  );

  it.each(reported.map((f) => [f.name, f] as const))(
    '%s: ignored, and the warning says what applies now',
    (name, former) => {
      const { config, warnings } = load({ [name]: '7' });
      expect(comparable(config)).toEqual(comparable(load({}).config));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(new RegExp(`^${name} is a former setting, ignored: `));
      expect(warnings[0]).toContain(former.where ? `now fixed, ${former.now}` : former.now);
    },
  );

  it('says where the spool now is on this installation', () => {
    const { config, warnings } = load({ PRESSROOM_SPOOL_DIR: '/var/spool/pressroom' });
    expect(warnings[0]).toContain(`(here ${config.storage.spoolDir})`);
  });

  describe('PRESSROOM_REMOTE_RESOURCE_HOSTS', () => {
    it.each([
      [
        'alone: the hosts after on',
        {},
        { enabled: true, hosts: ['assets.internal:8443', '10.0.0.5'] },
        'read as PRESSROOM_REMOTE_RESOURCES=on,assets.internal:8443,10.0.0.5',
      ],
      [
        'with the former switch, a bare on: merged',
        { PRESSROOM_REMOTE_RESOURCES: 'on' },
        { enabled: true, hosts: ['assets.internal:8443', '10.0.0.5'] },
        'read as PRESSROOM_REMOTE_RESOURCES=on,assets.internal:8443,10.0.0.5',
      ],
      [
        'with off: off wins',
        { PRESSROOM_REMOTE_RESOURCES: 'off' },
        { enabled: false, hosts: [] },
        'ignored: PRESSROOM_REMOTE_RESOURCES is set too and applies',
      ],
      [
        'with hosts of the new setting: the new setting wins',
        { PRESSROOM_REMOTE_RESOURCES: 'on,cdn.internal' },
        { enabled: true, hosts: ['cdn.internal'] },
        'ignored: PRESSROOM_REMOTE_RESOURCES is set too and applies',
      ],
    ])('%s', (_case, env, expected, warning) => {
      const { config, warnings } = load({ PRESSROOM_REMOTE_RESOURCE_HOSTS: 'assets.internal:8443, 10.0.0.5', ...env });
      expect(config.remoteResources).toMatchObject(expected);
      expect(warnings).toEqual([
        expect.stringContaining(
          `PRESSROOM_REMOTE_RESOURCE_HOSTS is a former setting${warning.startsWith('read') ? ': ' : ', '}${warning}`,
        ),
      ]);
    });

    it('stops start-up on a bad entry, naming the former variable', () => {
      expect(() => load({ PRESSROOM_REMOTE_RESOURCE_HOSTS: 'http://assets.internal' })).toThrow(ConfigError);
      expect(() => load({ PRESSROOM_REMOTE_RESOURCE_HOSTS: 'http://assets.internal' })).toThrow(
        /^PRESSROOM_REMOTE_RESOURCE_HOSTS \(read as PRESSROOM_REMOTE_RESOURCES\) must be .*; got "http:\/\/assets.internal"/,
      );
    });
  });

  describe('the request and job leases', () => {
    it.each([
      [
        'the job lease alone',
        { PRESSROOM_JOB_LEASE_MS: '5000' },
        5000,
        'PRESSROOM_JOB_LEASE_MS is a former setting: read as PRESSROOM_LEASE_MS=5000',
      ],
      [
        'the request lease alone',
        { PRESSROOM_REQUEST_LEASE_MS: '45000' },
        45_000,
        'PRESSROOM_REQUEST_LEASE_MS is a former setting: read as PRESSROOM_LEASE_MS=45000',
      ],
      [
        'both: the longer',
        { PRESSROOM_JOB_LEASE_MS: '60000', PRESSROOM_REQUEST_LEASE_MS: '20000' },
        60_000,
        'PRESSROOM_REQUEST_LEASE_MS and PRESSROOM_JOB_LEASE_MS are former settings: read as PRESSROOM_LEASE_MS=60000',
      ],
    ])('%s carries over', (_case, env, leaseMs, warning) => {
      const { config, warnings } = load(env);
      expect(config.leaseMs).toBe(leaseMs);
      expect(warnings).toEqual([expect.stringContaining(warning)]);
    });

    it('PRESSROOM_LEASE_MS, set too, wins, and each former one is named', () => {
      const { config, warnings } = load({
        PRESSROOM_LEASE_MS: '9000',
        PRESSROOM_JOB_LEASE_MS: '60000',
        PRESSROOM_REQUEST_LEASE_MS: '20000',
      });
      expect(config.leaseMs).toBe(9000);
      expect(warnings).toEqual([
        expect.stringContaining(
          'PRESSROOM_REQUEST_LEASE_MS is a former setting, ignored: PRESSROOM_LEASE_MS is set too and applies',
        ),
        expect.stringContaining(
          'PRESSROOM_JOB_LEASE_MS is a former setting, ignored: PRESSROOM_LEASE_MS is set too and applies',
        ),
      ]);
    });

    it('a value out of the lease bounds stops start-up, naming the former variable', () => {
      expect(() => load({ PRESSROOM_JOB_LEASE_MS: '500' })).toThrow(
        'PRESSROOM_JOB_LEASE_MS (read as PRESSROOM_LEASE_MS) must be between 1000 and 3600000; got 500',
      );
    });
  });

  it('gives one line per former setting and one for the rest, and nothing when none is set', () => {
    const { warnings } = load({
      PRESSROOM_ASSET_MAX_BYTES: '2048',
      PRESSROOM_SWEEP_INTERVAL_SECONDS: '5',
      PRESSROOM_RENDER_CONCURENCY: '4',
    });
    expect(warnings).toEqual([
      'PRESSROOM_SWEEP_INTERVAL_SECONDS is a former setting, ignored: now fixed, 60 s, in src/ops/sweep.ts; see docs/settings.md "Former settings".',
      'PRESSROOM_ASSET_MAX_BYTES=2048 is a former setting, kept: the bound fixed in src/assets/assets.ts is at most 10485760 (10 MiB) and yours is lower, so 2048 (2 KiB) applies; unset it to take the fixed bound; see docs/settings.md "Former settings".',
      'ignored environment variables: PRESSROOM_RENDER_CONCURENCY (not a setting). See docs/settings.md.',
    ]);
    expect(load({ PRESSROOM_RENDER_CONCURRENCY: '2' }).warnings).toEqual([]);
  });

  it('applies the tests’ tuning after a kept bound', () => {
    const config = loadConfig(
      { ...base(), PRESSROOM_ASSET_MAX_BYTES: '2048' },
      { tuning: { assets: { maxBytes: 4096 } } },
    );
    expect(config.assets.maxBytes).toBe(4096);
    expect(Object.isFrozen(config.assets)).toBe(true);
  });
});
