/**
 * Issue 49's signing cases against a running service (loopback): how long a hostile request takes, what
 * it answers, and the longest `/healthz` answer while it runs (a probe every 100 ms), or how long
 * another account's paid signature waits behind it. Hostile inputs are made here (OpenSSL, pdf-lib).
 *
 *   node --import tsx bench/bounds/signing-stall.ts --url http://127.0.0.1:18449 --keys KEY_A,KEY_B,KEY_C --case <case>
 *
 * Cases: `p12-wrong` / `p12-right` (a PKCS#12 of 8,388,607 iterations uploaded by A with a wrong or the
 * right password, stored as `hostile`), `sign-stored` (A signs with its stored `hostile`), `sign-two`
 * (A and B sign with `hostile` while C signs with `ok`), `verify-flood` (A and B verify a PDF of 300
 * fields sharing one 1 MB signature, twice each at once, while C signs with `ok`), `tools-signed` (C
 * signs, then protects and watermarks the result), `rsa512` (C uploads an RSA-512 key and signs with it),
 * `verify-one` (A verifies a PDF of `--fields` fields sharing one signature of `--bytes` bytes; defaults
 * 60 and 1 MiB), `p12-cap` (A and B each upload a PKCS#12 at the bounds — 300,000 rounds for every step, 3DES and RC2 —
 * while C signs), `sign-cap` (A and B sign with those while C signs).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { option } from '../cli-option.js';
import { textPdf } from '../text-pdf.js';
import { sharedSignaturePdf } from '../../test/support/documents/hostile-pdfs.js';

const URL_BASE = option('--url', 'http://127.0.0.1:18449');
const [A, B, C] = option('--keys', '').split(',');
const CASE = option('--case', 'p12-wrong');
const dir = mkdtempSync(join(tmpdir(), 'signing-stall-'));
const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

async function call(
  key: string,
  path: string,
  body: unknown,
): Promise<{ status: number; seconds: number; text: string; bytes: Buffer }> {
  const started = performance.now();
  const response = await fetch(`${URL_BASE}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    seconds: (performance.now() - started) / 1000,
    text: bytes.subarray(0, 400).toString(),
    bytes,
  };
}

/** Runs `work` while /healthz is asked every 100 ms; the longest answer in seconds. */
async function withHealthProbe<T>(work: () => Promise<T>): Promise<{ result: T; worstHealthzSeconds: number }> {
  let worst = 0;
  let running = true;
  const probe = (async () => {
    while (running) {
      const started = performance.now();
      await fetch(`${URL_BASE}/healthz`).then((r) => r.arrayBuffer());
      worst = Math.max(worst, (performance.now() - started) / 1000);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const result = await work();
  running = false;
  await probe;
  return { result, worstHealthzSeconds: Number(worst.toFixed(2)) };
}

function hostilePkcs12(): Buffer {
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'h.key',
    '-out',
    'h.crt',
    '-days',
    '30',
    '-subj',
    '/CN=Hostile',
  ]);
  openssl([
    'pkcs12',
    '-export',
    '-legacy',
    '-keypbe',
    'PBE-SHA1-3DES',
    '-certpbe',
    'NONE',
    '-iter',
    '8388607',
    '-inkey',
    'h.key',
    '-in',
    'h.crt',
    '-out',
    'h.p12',
    '-passout',
    'pass:right',
  ]);
  return readFileSync(join(dir, 'h.p12'));
}

function atCapPkcs12(): Buffer {
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'c.key',
    '-out',
    'c.crt',
    '-days',
    '30',
    '-subj',
    '/CN=At the bounds',
  ]);
  openssl([
    'pkcs12',
    '-export',
    '-legacy',
    '-iter',
    '300000',
    '-inkey',
    'c.key',
    '-in',
    'c.crt',
    '-out',
    'c.p12',
    '-passout',
    'pass:pw',
  ]);
  return readFileSync(join(dir, 'c.p12'));
}

function plainPkcs12(bits: number): Buffer {
  openssl([
    'req',
    '-x509',
    '-newkey',
    `rsa:${bits}`,
    '-nodes',
    '-keyout',
    `k${bits}.key`,
    '-out',
    `k${bits}.crt`,
    '-days',
    '30',
    '-subj',
    `/CN=Signer ${bits}`,
  ]);
  openssl([
    'pkcs12',
    '-export',
    '-inkey',
    `k${bits}.key`,
    '-in',
    `k${bits}.crt`,
    '-out',
    `k${bits}.p12`,
    '-passout',
    'pass:pw',
  ]);
  return readFileSync(join(dir, `k${bits}.p12`));
}

const credits = async (key: string) =>
  ((await (await fetch(`${URL_BASE}/v1/account`, { headers: { 'x-api-key': key } })).json()) as { credits: number })
    .credits;
const pdfsig = (pdf: Buffer) => {
  writeFileSync(join(dir, 'out.pdf'), pdf);
  try {
    return execFileSync('pdfsig', ['-nocert', 'out.pdf'], { cwd: dir, encoding: 'utf8' })
      .match(/Signature Validation: .*/g)
      ?.join('; ');
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error)
      .trim()
      .slice(0, 200);
  }
};

async function ensureOkCertificate(key: string): Promise<void> {
  await call(key, '/v1/certificates', {
    name: 'ok',
    pkcs12_base64: plainPkcs12(2048).toString('base64'),
    password: 'pw',
  });
}

const contract = (await textPdf(3)).toString('base64');
const report: Record<string, unknown> = { case: CASE };
try {
  if (CASE === 'p12-wrong' || CASE === 'p12-right') {
    const p12 = hostilePkcs12().toString('base64');
    const password = CASE === 'p12-right' ? 'right' : 'wrong';
    const { result, worstHealthzSeconds } = await withHealthProbe(() =>
      call(A!, '/v1/certificates', { name: 'hostile', pkcs12_base64: p12, password }),
    );
    Object.assign(report, {
      status: result.status,
      seconds: result.seconds.toFixed(1),
      answer: result.text,
      worstHealthzSeconds,
    });
  } else if (CASE === 'sign-stored') {
    const before = await credits(A!);
    const { result, worstHealthzSeconds } = await withHealthProbe(() =>
      call(A!, '/v1/pdf-tools/sign', { pdf_base64: contract, certificate: 'hostile', export_type: 'binary' }),
    );
    Object.assign(report, {
      status: result.status,
      seconds: result.seconds.toFixed(1),
      answer: result.status === 200 ? pdfsig(result.bytes) : result.text,
      worstHealthzSeconds,
      charged: before - (await credits(A!)),
    });
  } else if (CASE === 'sign-two') {
    await ensureOkCertificate(C!);
    const attacks = [A!, B!].map((key) =>
      call(key, '/v1/pdf-tools/sign', { pdf_base64: contract, certificate: 'hostile', export_type: 'binary' }),
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const victim = await call(C!, '/v1/pdf-tools/sign', {
      pdf_base64: contract,
      certificate: 'ok',
      export_type: 'binary',
    });
    const done = await Promise.all(attacks);
    Object.assign(report, {
      victim: { status: victim.status, seconds: victim.seconds.toFixed(1) },
      attackers: done.map((d) => ({
        status: d.status,
        seconds: d.seconds.toFixed(1),
        answer: d.status === 200 ? 'signed' : d.text,
      })),
    });
  } else if (CASE === 'verify-flood') {
    await ensureOkCertificate(C!);
    const alone = await call(C!, '/v1/pdf-tools/sign', {
      pdf_base64: contract,
      certificate: 'ok',
      export_type: 'binary',
    });
    const hostile = (await sharedSignaturePdf(300, 1 << 20)).toString('base64');
    const attacks = [A!, A!, B!, B!].map((key) => call(key, '/v1/pdf-tools/verify', { pdf_base64: hostile }));
    // Long enough for the uploads to be read and inspected (qpdf), so the checks are at the signing pool.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const victim = await call(C!, '/v1/pdf-tools/sign', {
      pdf_base64: contract,
      certificate: 'ok',
      export_type: 'binary',
    });
    const done = await Promise.all(attacks);
    Object.assign(report, {
      pdfMB: ((hostile.length * 0.75) / 1e6).toFixed(1),
      victimAlone: alone.seconds.toFixed(2),
      victimDuringFlood: { status: victim.status, seconds: victim.seconds.toFixed(2) },
      attackers: done.map((d) => ({ status: d.status, seconds: d.seconds.toFixed(1), answer: d.text.slice(0, 160) })),
    });
  } else if (CASE === 'verify-one') {
    const hostile = (
      await sharedSignaturePdf(Number(option('--fields', '60')), Number(option('--bytes', String(1 << 20))))
    ).toString('base64');
    const { result, worstHealthzSeconds } = await withHealthProbe(() =>
      call(A!, '/v1/pdf-tools/verify', { pdf_base64: hostile }),
    );
    Object.assign(report, {
      pdfMB: ((hostile.length * 0.75) / 1e6).toFixed(1),
      status: result.status,
      seconds: result.seconds.toFixed(2),
      answer: result.text.slice(0, 200),
      worstHealthzSeconds,
    });
  } else if (CASE === 'tools-signed') {
    await ensureOkCertificate(C!);
    const signed = await call(C!, '/v1/pdf-tools/sign', {
      pdf_base64: contract,
      certificate: 'ok',
      export_type: 'binary',
    });
    const input = signed.bytes.toString('base64');
    for (const [tool, extra] of [
      ['protect', { protect: { owner_password: 'owner-secret-1' } }],
      ['watermark', { watermark: { text: 'COPY' } }],
      ['metadata', { metadata: { title: 'T' } }],
      ['rotate', { rotation: 90 }],
    ] as const) {
      const before = await credits(C!);
      const result = await call(C!, `/v1/pdf-tools/${tool}`, { pdf_base64: input, export_type: 'binary', ...extra });
      const after = await credits(C!);
      const allowed =
        result.status === 422
          ? await call(C!, `/v1/pdf-tools/${tool}`, {
              pdf_base64: input,
              export_type: 'binary',
              allow_breaking_signatures: true,
              ...extra,
            })
          : undefined;
      report[tool] = {
        status: result.status,
        charged: before - after,
        answer: result.status === 200 ? pdfsig(result.bytes) : result.text.slice(0, 240),
        withAllow: allowed && {
          status: allowed.status,
          warnings: allowed.text.startsWith('%PDF') ? 'binary' : allowed.text.slice(0, 200),
        },
      };
    }
  } else if (CASE === 'p12-cap' || CASE === 'sign-cap') {
    await ensureOkCertificate(C!);
    const p12 = CASE === 'p12-cap' ? atCapPkcs12().toString('base64') : '';
    const { result, worstHealthzSeconds } = await withHealthProbe(async () => {
      const attacks = [A!, B!].map((key) =>
        CASE === 'p12-cap'
          ? call(key, '/v1/certificates', { name: 'atcap', pkcs12_base64: p12, password: 'pw' })
          : call(key, '/v1/pdf-tools/sign', { pdf_base64: contract, certificate: 'atcap', export_type: 'binary' }),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      const victim = await call(C!, '/v1/pdf-tools/sign', {
        pdf_base64: contract,
        certificate: 'ok',
        export_type: 'binary',
      });
      return { victim, attackers: await Promise.all(attacks) };
    });
    Object.assign(report, {
      worstHealthzSeconds,
      victim: { status: result.victim.status, seconds: result.victim.seconds.toFixed(2) },
      attackers: result.attackers.map((d) => ({ status: d.status, seconds: d.seconds.toFixed(2) })),
    });
  } else if (CASE === 'rsa512') {
    const upload = await call(C!, '/v1/certificates', {
      name: 'weak',
      pkcs12_base64: plainPkcs12(512).toString('base64'),
      password: 'pw',
    });
    const signed =
      upload.status === 201
        ? await call(C!, '/v1/pdf-tools/sign', { pdf_base64: contract, certificate: 'weak', export_type: 'binary' })
        : undefined;
    Object.assign(report, {
      upload: { status: upload.status, answer: upload.text.slice(0, 300) },
      sign: signed && { status: signed.status, answer: signed.status === 200 ? pdfsig(signed.bytes) : signed.text },
    });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(report, null, 2));
