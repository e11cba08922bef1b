/**
 * The signature report of /v1/pdf-tools/verify, from poppler's `pdfsig` (an independent verifier: NSS
 * checks each CMS against the bytes its ByteRange covers) in a child process under the ceilings of
 * shared/child-limits.ts. libpdf 0.4 signs but does not verify. `pdfsig -dump` also writes each
 * signature's CMS, from which the signing time and a time-stamp token's time are read (cms-times.ts):
 * pdfsig prints the signing time in the server's local time, and no time-stamp at all.
 * Certificate trust is not judged (`-nocert`): the service has no trust list of the customer's; the
 * report says who signed, when, and whether the bytes are still the ones signed.
 *
 * Bounded (issue 49: 300 fields naming one 1 MB signature made pdfsig write 300 MB, all read back at
 * once): at most VERIFY_MAX_SIGNATURES signatures (counted before, pdf-tools/sign.ts, and again here);
 * the dump's files share VERIFY_DUMP_BUDGET_BYTES, each under its share as its file-size ceiling
 * (past it pdfsig is stopped: PDF_TOO_COMPLEX); they are read one at a time, each removed once read;
 * both runs share one deadline.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLimited } from '../shared/child-limits.js';
import { AppError, ValidationError } from '../shared/errors.js';
import { signingTimeOf, timestampTimeOf } from './cms-times.js';
import {
  PDFSIG_MEMORY_CEILING_BYTES,
  PDFSIG_TIMEOUT_MS,
  VERIFY_DUMP_BUDGET_BYTES,
  VERIFY_MAX_SIGNATURES,
} from './signing-bounds.js';

/** One signature as the report shows it. */
export interface SignatureReportEntry {
  field: string;
  signer: string | null;
  signer_dn: string | null;
  /** The signer's claimed time (ISO 8601), from the CMS signed attributes. */
  signing_time: string | null;
  /** Whether an RFC 3161 time-stamp token is in the signature, and its time. */
  timestamp: { present: boolean; time: string | null };
  subfilter: string | null;
  /** The CMS verifies against the bytes it covers. */
  valid: boolean;
  /** pdfsig's own words for the check. */
  validation: string;
  /** The signature covers the whole file: nothing was added after it. */
  covers_whole_document: boolean;
}

export interface SignatureReport {
  signed: boolean;
  /** Every signature valid and the last one covering the whole file. */
  intact: boolean;
  /** Bytes were changed or added after a signature. */
  modified_after_signing: boolean;
  signatures: SignatureReportEntry[];
}

const PDFSIG_OUT_OF_MEMORY = /std::bad_alloc|out of memory/i;

/** Splits pdfsig's text into one record of `- Key: value` lines per signature. */
export function parsePdfsig(text: string): Array<Record<string, string>> {
  const records: Array<Record<string, string>> = [];
  for (const line of text.split('\n')) {
    if (/^Signature #\d+:/.test(line)) records.push({});
    const current = records.at(-1);
    const item = /^\s+- ([^:]+?)(?:: (.*))?$/.exec(line);
    if (current && item) current[item[1]!.trim()] = (item[2] ?? '').trim();
  }
  return records;
}

function entryOf(record: Record<string, string>, cms: Buffer | undefined): SignatureReportEntry {
  const validation = record['Signature Validation'] ?? 'unknown';
  const stamp = cms ? timestampTimeOf(cms) : null;
  return {
    field: record['Signature Field Name'] ?? '',
    signer: record['Signer Certificate Common Name'] ?? null,
    signer_dn: record['Signer full Distinguished Name'] ?? null,
    signing_time: cms ? (signingTimeOf(cms)?.toISOString() ?? null) : null,
    timestamp: { present: stamp !== null, time: stamp?.toISOString() ?? null },
    subfilter: record['Signature Type'] ?? null,
    valid: validation === 'Signature is Valid.',
    validation: validation.replace(/\.$/, ''),
    covers_whole_document: 'Total document signed' in record,
  };
}

/** The 422 of a PDF with more signatures than one check reports (`loc`: the input). */
export function tooManySignatures(count: number, loc: (string | number)[]): ValidationError {
  return new ValidationError([
    {
      loc,
      msg: `The PDF has ${count} signatures; a check reports at most ${VERIFY_MAX_SIGNATURES}. Nothing was charged`,
      type: 'too_many_signatures',
    },
  ]);
}

/** One pdfsig run in `dir` within what is left of the check's deadline; its coded failures. */
async function runPdfsig(dir: string, args: string[], deadline: number, fileBytes?: number) {
  const timeoutMs = Math.max(1, Math.round(deadline - performance.now()));
  const ceiling = {
    memoryBytes: PDFSIG_MEMORY_CEILING_BYTES,
    cpuSeconds: Math.ceil(PDFSIG_TIMEOUT_MS / 1000),
    outOfMemory: PDFSIG_OUT_OF_MEMORY,
    ...(fileBytes === undefined ? {} : { fileBytes }),
  };
  const run = await runLimited('pdfsig', [...args, 'doc.pdf'], { cwd: dir, timeoutMs, maxBuffer: 4 << 20, ceiling });
  if (run.ended === 'ceiling' && run.ceiling === 'file') {
    throw new AppError(
      'PDF_TOO_COMPLEX',
      `The signatures hold more data than one check reads (${VERIFY_DUMP_BUDGET_BYTES / 1024 ** 2} MiB in all); nothing was charged.`,
    );
  }
  if (run.ended === 'ceiling')
    throw new AppError(
      'PDF_TOO_COMPLEX',
      'Reading the signatures needed more memory or CPU time than one check may use; nothing was charged.',
    );
  if (run.ended === 'timeout')
    throw new AppError(
      'PDF_TOOL_TIMEOUT',
      `Reading the signatures took longer than ${PDFSIG_TIMEOUT_MS} ms and was stopped.`,
    );
  if (run.ended !== 'exit')
    throw new AppError(
      'PDF_TOOL_FAILED',
      run.ended === 'missing'
        ? `"${run.program}" was not found on PATH; install Debian's poppler-utils package.`
        : 'The signatures could not be read.',
    );
  return run;
}

/** Runs pdfsig on the PDF and reads its report; the PDF has been checked to be one (pdf-inputs.ts). */
export async function verifySignatures(pdf: Buffer, loc: (string | number)[] = ['body']): Promise<SignatureReport> {
  const deadline = performance.now() + PDFSIG_TIMEOUT_MS;
  const dir = await mkdtemp(join(tmpdir(), 'pressroom-verify-'));
  try {
    await writeFile(join(dir, 'doc.pdf'), pdf);
    // The report and the dump are two runs: with -dump pdfsig writes the CMS files and prints no report.
    const run = await runPdfsig(dir, ['-nocert', '-no-ocsp'], deadline);
    // pdfsig exits 2 for a document without signatures ("File 'doc.pdf' does not contain any signatures").
    const records = run.exitCode === 0 ? parsePdfsig(run.stdout) : [];
    if (records.length > VERIFY_MAX_SIGNATURES) throw tooManySignatures(records.length, loc);
    if (records.length > 0)
      await runPdfsig(
        dir,
        ['-nocert', '-no-ocsp', '-dump'],
        deadline,
        Math.floor(VERIFY_DUMP_BUDGET_BYTES / records.length),
      );
    const signatures: SignatureReportEntry[] = [];
    for (const [i, record] of records.entries()) {
      const file = join(dir, `doc.pdf.sig${i}`);
      const cms = await readFile(file).catch(() => undefined);
      await rm(file, { force: true });
      signatures.push(entryOf(record, cms));
    }
    const allValid = signatures.every((s) => s.valid);
    const lastCovers = signatures.some((s) => s.covers_whole_document);
    return {
      signed: signatures.length > 0,
      intact: signatures.length > 0 && allValid && lastCovers,
      modified_after_signing: signatures.length > 0 && (!allValid || !lastCovers),
      signatures,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
