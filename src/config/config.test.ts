import { mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load-config.js';
import { defaultRendererMemoryMb } from './settings.js';

const base = () => ({ PRESSROOM_DATA_DIR: mkdtempSync(join(tmpdir(), 'pressroom-config-')) });

describe('config', () => {
  it('has the documented defaults and an embedded SQLite database', () => {
    const env = base();
    const config = loadConfig(env);
    expect(config.http.port).toBe(8080);
    expect(config.http.publicUrl).toBe('http://localhost:8080');
    expect(config.database.dialect).toBe('sqlite');
    expect(config.database.sqlitePath).toBe(join(env.PRESSROOM_DATA_DIR, 'pressroom.db'));
    expect(config.storage.url).toBe(`file://${join(env.PRESSROOM_DATA_DIR, 'files')}`);
    expect(loadConfig({ PRESSROOM_DATA_DIR: join(env.PRESSROOM_DATA_DIR, 'a#b') }).storage.url).toMatch(
      /a%23b\/files$/,
    );
    expect(config.http.adminToken).toBeUndefined();
    expect(config.allowPrivateNetworks).toBe(false);
    expect(config.plans.free).toEqual({ perMinute: 60, perDay: 1000 });
    expect(config.plans.enterprise).toEqual({ perMinute: null, perDay: null });
    expect(config.images).toEqual({ urlMaxBytes: 10 * 1024 * 1024, urlTimeoutMs: 10_000 });
    expect(config.remoteResources).toMatchObject({
      enabled: true,
      hosts: [],
      maxPerDocument: 50,
      documentMaxBytes: 20 * 1024 * 1024,
    });
    expect(Object.isFrozen(config.http)).toBe(true);
    expect(Object.isFrozen(config.remoteResources.hosts)).toBe(true);
  });

  it('derives the public URL from PORT, without a trailing slash when given', () => {
    expect(loadConfig({ ...base(), PORT: '9090' }).http.publicUrl).toBe('http://localhost:9090');
    expect(loadConfig({ ...base(), PRESSROOM_PUBLIC_URL: 'https://pdf.example.com/' }).http.publicUrl).toBe(
      'https://pdf.example.com',
    );
  });

  it('spools PDFs of 1 MiB or more in the data dir, or in the temporary directory when nothing else uses the data dir', () => {
    const env = base();
    expect(loadConfig(env).storage).toMatchObject({
      spoolDir: join(env.PRESSROOM_DATA_DIR, 'spool'),
      spoolAboveBytes: 1024 * 1024,
    });
    const stateless = {
      PRESSROOM_DATABASE_URL: 'postgres://127.0.0.1/test',
      PRESSROOM_SECRET_KEY: 'k'.repeat(32),
      PRESSROOM_STORAGE_URL: 's3://bucket/prefix',
    };
    expect(loadConfig({ ...env, ...stateless }).storage.spoolDir).toBe(join(tmpdir(), 'pressroom-spool'));
    // Fixed values are tuned in code (tests), not by variables.
    expect(
      loadConfig(env, { tuning: { storage: { spoolDir: '/var/spool/pressroom', spoolAboveBytes: 0 } } }).storage,
    ).toMatchObject({ spoolDir: '/var/spool/pressroom', spoolAboveBytes: 0 });
  });

  it('generates the master key once and keeps it in the data dir', () => {
    const env = base();
    const first = loadConfig(env).secretKey;
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(env.PRESSROOM_DATA_DIR, 'secret.key'), 'utf8').trim()).toBe(first);
    expect(loadConfig(env).secretKey).toBe(first);
  });

  it.each([
    ['PORT', 'eighty', /PORT must be a whole number between 0 and 65535; got "eighty"/],
    ['PORT', '70000', /PORT must be between 0 and 65535; got 70000/],
    ['PRESSROOM_DATABASE_URL', 'mysql://x', /PRESSROOM_DATABASE_URL must start with postgres:\/\/ or postgresql:\/\//],
    ['PRESSROOM_REDIS_URL', 'not a url', /PRESSROOM_REDIS_URL must be a URL/],
    ['PRESSROOM_PUBLIC_URL', 'ftp://example.com', /PRESSROOM_PUBLIC_URL must start with http:\/\/ or https:\/\//],
    ['PRESSROOM_ALLOW_PRIVATE_NETWORKS', 'maybe', /PRESSROOM_ALLOW_PRIVATE_NETWORKS must be true or false/],
    ['PRESSROOM_SECRET_KEY', 'short', /PRESSROOM_SECRET_KEY must be at least 32 characters/],
    ['PRESSROOM_ADMIN_TOKEN', 'short', /PRESSROOM_ADMIN_TOKEN must be at least 16 characters/],
    ['PRESSROOM_METRICS_TOKEN', 'short', /PRESSROOM_METRICS_TOKEN must be at least 16 characters/],
    [
      'PRESSROOM_LOG_LEVEL',
      'loud',
      /PRESSROOM_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "loud"/,
    ],
    ['PRESSROOM_RENDER_CONCURRENCY', '0', /PRESSROOM_RENDER_CONCURRENCY/],
    ['PRESSROOM_STORAGE_URL', 'ftp://x', /PRESSROOM_STORAGE_URL/],
    ['PRESSROOM_RENDER_ACCOUNT_SLOTS', '0', /PRESSROOM_RENDER_ACCOUNT_SLOTS/],
    ['PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES', 'big', /PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES/],
    ['PRESSROOM_LEASE_MS', '500', /PRESSROOM_LEASE_MS must be between 1000 and 3600000; got 500/],
    ['PRESSROOM_PLAN_PRO_PER_DAY', 'lots', /PRESSROOM_PLAN_PRO_PER_DAY/],
    [
      'PRESSROOM_REMOTE_RESOURCES',
      'maybe',
      /PRESSROOM_REMOTE_RESOURCES must be on, off, or on followed by host or host:port entries/,
    ],
    ['PRESSROOM_REMOTE_RESOURCES', 'off,assets.internal', /hosts make no sense with off/],
    ['PRESSROOM_REMOTE_RESOURCES', 'on,off', /got "off"/],
    ['PRESSROOM_REMOTE_RESOURCES', 'assets.internal', /PRESSROOM_REMOTE_RESOURCES must be on, off/],
    ['PRESSROOM_REMOTE_RESOURCES', 'on,,assets.internal', /got ""/],
    ['PRESSROOM_REMOTE_RESOURCES', 'on,http://assets.internal', /got "http:\/\/assets.internal"/],
  ])('stops on a bad %s with a message naming it', (name, value, message) => {
    expect(() => loadConfig({ ...base(), [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base(), [name]: value })).toThrow(message);
  });

  it('treats an empty variable as unset', () => {
    expect(
      loadConfig({ ...base(), PORT: '', PRESSROOM_ADMIN_TOKEN: '', PRESSROOM_REMOTE_RESOURCES: ' ' }),
    ).toMatchObject({ http: { port: 8080, adminToken: undefined }, remoteResources: { enabled: true } });
  });

  it('parses JSON bodies over 256 KiB on at most cores − 1 threads, with a heap cap that follows the body limit', () => {
    const cores = availableParallelism();
    expect(loadConfig(base()).http.jsonWorkers).toEqual({
      thresholdBytes: 256 * 1024,
      threads: Math.max(1, cores - 1),
      queueLimit: 16,
      accountLimit: 4,
      memoryMb: 640,
    });
    expect(
      loadConfig({ ...base(), PRESSROOM_BODY_LIMIT_BYTES: String(20 * 1024 * 1024) }).http.jsonWorkers.memoryMb,
    ).toBe(1280);
    expect(loadConfig({ ...base(), PRESSROOM_BODY_LIMIT_BYTES: String(1024 * 1024) }).http.jsonWorkers.memoryMb).toBe(
      256,
    );
    expect(loadConfig(base(), { machine: { cores: 8, memoryMb: 16_384 } }).http.jsonWorkers.threads).toBe(7);
  });

  it('has the documented body limits', () => {
    expect(loadConfig(base()).http).toMatchObject({
      bodyLimitBytes: 10 * 1024 * 1024,
      templateBodyLimitBytes: 4 * 1024 * 1024,
      smallBodyLimitBytes: 64 * 1024,
    });
  });

  it('has the documented PDF tools bounds, and derives their body limit from the input bound', () => {
    const config = loadConfig(base());
    expect(config.pdfTools).toMatchObject({
      maxInputBytes: 50 * 1024 * 1024,
      maxPages: 2000,
      maxMergeInputs: 20,
      fetchTimeoutMs: 15_000,
      timeoutMs: 60_000,
      concurrency: availableParallelism(),
    });
    expect(config.http.pdfToolsBodyLimitBytes).toBe(Math.ceil((50 * 1024 * 1024 * 4) / 3) + 1024 * 1024);
    expect(loadConfig({ ...base(), PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES: '3072' }).http.pdfToolsBodyLimitBytes).toBe(
      4096 + 1024 * 1024,
    );
  });

  it('reads plan limits, with "unlimited"', () => {
    const config = loadConfig({
      ...base(),
      PRESSROOM_PLAN_FREE_PER_MINUTE: '10',
      PRESSROOM_PLAN_PRO_PER_DAY: 'unlimited',
    });
    expect(config.plans.free.perMinute).toBe(10);
    expect(config.plans.pro.perDay).toBeNull();
  });

  it.each([
    ['1', { accountSlots: 1, previewSlots: 1 }],
    ['2', { accountSlots: 1, previewSlots: 1 }],
    ['8', { accountSlots: 7, previewSlots: 4 }],
  ])('shares %s render slots fairly by default', (concurrency, slots) => {
    const config = loadConfig({
      ...base(),
      PRESSROOM_RENDER_CONCURRENCY: concurrency,
      PRESSROOM_RENDER_QUEUE_LIMIT: '40',
    });
    expect(config.renderFairness).toEqual({
      ...slots,
      accountQueueLimit: 10,
      accountPreviewQueueLimit: 2,
      failureBudgetSeconds: 60,
      failureWindowSeconds: 600,
    });
    expect(config.jobs.workerConcurrency).toBe(Number(concurrency));
    expect(config.webhooks.accountConcurrency).toBe(4);
  });

  it('sizes the renderer memory bound to the machine: half its memory over the slots, at least 2048 MB', () => {
    expect(defaultRendererMemoryMb(24 * 1024, 2)).toBe(6144);
    expect(defaultRendererMemoryMb(64 * 1024, 4)).toBe(8192);
    expect(defaultRendererMemoryMb(8 * 1024, 2)).toBe(2048);
    expect(defaultRendererMemoryMb(16 * 1024, 16)).toBe(2048);
    expect(loadConfig({ ...base(), PRESSROOM_RENDERER_MEMORY_MB: '3000' }).rendering.rendererMemoryMb).toBe(3000);
    expect(loadConfig(base()).rendering.rendererMemoryMb).toBeGreaterThanOrEqual(2048);
    expect(
      loadConfig({ ...base(), PRESSROOM_RENDER_CONCURRENCY: '2' }, { machine: { cores: 2, memoryMb: 24 * 1024 } })
        .rendering.rendererMemoryMb,
    ).toBe(6144);
  });

  it('reads the async render deadline', () => {
    expect(loadConfig({ ...base(), PRESSROOM_ASYNC_RENDER_TIMEOUT_MS: '900000' }).rendering.asyncTimeoutMs).toBe(
      900_000,
    );
  });

  it('holds jobs, reserved credits and idempotency keys under one lease, 30 s by default', () => {
    expect(loadConfig(base()).leaseMs).toBe(30_000);
    expect(loadConfig({ ...base(), PRESSROOM_LEASE_MS: '2000' }).leaseMs).toBe(2000);
  });

  it.each([
    ['on', { enabled: true, hosts: [] }],
    ['off', { enabled: false, hosts: [] }],
    ['false', { enabled: false, hosts: [] }],
    ['on,assets.internal:8443', { enabled: true, hosts: ['assets.internal:8443'] }],
    [
      'ON, Assets.Internal , 10.0.0.5,[fd00::1]:443',
      { enabled: true, hosts: ['assets.internal', '10.0.0.5', '[fd00::1]:443'] },
    ],
  ])('reads PRESSROOM_REMOTE_RESOURCES=%s', (value, expected) => {
    expect(loadConfig({ ...base(), PRESSROOM_REMOTE_RESOURCES: value }).remoteResources).toMatchObject(expected);
  });

  it('applies tuning last, at any depth, leaving the rest as loaded', () => {
    const config = loadConfig(
      { ...base(), PRESSROOM_JOB_POLL_MS: '100' },
      { tuning: { webhooks: { baseDelayMs: 50 }, remoteResources: { hosts: ['127.0.0.1:9'] } } },
    );
    expect(config.webhooks).toEqual({ timeoutMs: 10_000, maxAttempts: 8, baseDelayMs: 50, accountConcurrency: 4 });
    expect(config.remoteResources).toMatchObject({ enabled: true, hosts: ['127.0.0.1:9'], maxPerDocument: 50 });
    expect(config.jobs.pollIntervalMs).toBe(100);
    expect(Object.isFrozen(config.webhooks)).toBe(true);
  });
});
