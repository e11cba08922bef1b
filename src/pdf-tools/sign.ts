/** Sign and verify: a PDF you send, signed with one of the account's certificates (signing/), or its signatures reported. */
import { VERIFY_MAX_SIGNATURES } from '../signing/signing-bounds.js';
import { tooManySignatures, type SignatureReport } from '../signing/verify.js';
import type { SignatureOptions, Signing } from '../signing/sign.js';
import { readPdfInputs, type InputReader, type PdfInputLimits, type PdfSource } from './pdf-inputs.js';

/** A checked signing: the input, and the signature asked for (certificate, TSA and page checked). */
export interface PreparedSigning {
  pdf: Buffer;
  signature: SignatureOptions;
}

/** Reads and checks the input, then everything about the signature that can be checked before the charge. */
export async function prepareSigning(
  source: PdfSource,
  signature: SignatureOptions,
  limits: PdfInputLimits,
  reader: InputReader & { signing: Signing },
): Promise<PreparedSigning> {
  const [input] = await readPdfInputs([source], [[]], limits, reader);
  await reader.signing.prepare(signature, { accountId: reader.accountId, kind: 'paid', loc: ['body'] }, input!.pages);
  return { pdf: input!.pdf, signature };
}

/** The signed document. */
export function signDocument(
  prepared: PreparedSigning,
  { signing, accountId }: InputReader & { signing: Signing },
): Promise<Buffer> {
  return signing.sign(prepared.pdf, prepared.signature, { accountId, kind: 'paid', loc: ['body'] });
}

/**
 * The signature report of the input: read and checked as every tool's input is, never charged. More
 * signatures than one check reports is a 422 before any slot is taken (verify.ts bounds the rest).
 */
export async function verifyDocument(
  source: PdfSource,
  limits: PdfInputLimits,
  reader: InputReader & { signing: Signing },
): Promise<SignatureReport> {
  const [input] = await readPdfInputs([source], [[]], limits, reader);
  const loc = ['body', source.pdfUrl != null ? 'pdf_url' : 'pdf_base64'];
  if (input!.signatures > VERIFY_MAX_SIGNATURES) throw tooManySignatures(input!.signatures, loc);
  return reader.signing.verify(input!.pdf, reader.accountId, loc);
}
