/**
 * What does a signature cost? Signs, through the service's own signing (src/signing/sign.ts: its fair
 * pool and its thread, libpdf's load, incremental update and P12 signer), a 2-page PDF and a 300-page text PDF (both
 * made with @cantoo/pdf-lib), N times each, and prints wall p50 ms, CPU ms per signature, the longest
 * event-loop stall, the RSS before and at most, and the size added. Certificates are made with OpenSSL
 * (test/support/documents/signing-kit.ts); SQLite in a temporary directory; no TSA (B-B).
 *
 *   node --import tsx bench/costs/signing-bench.ts [--n 5]
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.js';
import { createGuardedDispatcher } from '../../src/net/guarded-dispatcher.js';
import { createLogger } from '../../src/shared/log.js';
import { createCertificateService } from '../../src/signing/certificates.js';
import { createSigning } from '../../src/signing/sign.js';
import { SIGNING_TIMEOUT_MS } from '../../src/signing/signing-bounds.js';
import { createSigningPool } from '../../src/signing/signing-pool.js';
import { createSigningKit } from '../../test/support/documents/signing-kit.js';
import { textPdf } from '../text-pdf.js';

const args = process.argv.slice(2);
const N = args.includes('--n') ? Number(args[args.indexOf('--n') + 1]) || 5 : 5;

const dir = mkdtempSync(join(tmpdir(), 'signing-bench-'));
const kit = createSigningKit();
const database = await openDatabase({ dialect: 'sqlite', sqlitePath: join(dir, 'b.db') });
await database.db
  .insertInto('accounts')
  .values({
    id: 'acc',
    email: null,
    plan: 'pro',
    credits: 0,
    rate_limit_per_minute: null,
    rate_limit_per_day: null,
    created_at: 0,
  })
  .execute();
const pool = createSigningPool({ slots: 2, timeoutMs: SIGNING_TIMEOUT_MS, maxWaitMs: 60_000 });
const certificates = createCertificateService({
  db: database.db,
  secretKey: 'bench-secret-key-0123456789abcdef0123456789',
  logger: createLogger('silent'),
  pool,
});
await certificates.add('acc', {
  name: 'bench',
  pkcs12Base64: kit.pkcs12({ cn: 'Bench', password: 'pw' }).toString('base64'),
  password: 'pw',
});
const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: false });
const signing = createSigning({ certificates, allowPrivateNetworks: false, dispatcher, pool });
const context = { accountId: 'acc', kind: 'paid' as const, loc: ['body'] };

for (const pages of [2, 300]) {
  const pdf = await textPdf(pages);
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssMax = rssBefore;
  const watch = setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage().rss)), 5);
  const stall = monitorEventLoopDelay({ resolution: 5 });
  stall.enable();
  const walls: number[] = [];
  let signed = pdf;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    signed = await signing.sign(pdf, { certificate: 'bench' }, context);
    walls.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  stall.disable();
  clearInterval(watch);
  walls.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      pages,
      inputBytes: pdf.length,
      addedBytes: signed.length - pdf.length,
      wallP50Ms: Math.round(walls[Math.floor(N / 2)]!),
      cpuMsPerSignature: Math.round((cpu.user + cpu.system) / 1000 / N),
      maxStallMs: Math.round(stall.max / 1e6),
      rssBeforeMb: Math.round(rssBefore / 1e6),
      rssMaxMb: Math.round(rssMax / 1e6),
    }),
  );
}
await pool.close();
await dispatcher.close();
await database.close();
kit.close();
rmSync(dir, { recursive: true, force: true });
