/**
 * Reads a PKCS#12 file as libpdf's P12Signer does, and says precisely why one cannot be used: not
 * PKCS#12, a wrong password, a key that is not the certificate's, a certificate not valid now. The
 * key check signs a probe and verifies it with the certificate's public key (node:crypto), so a file
 * whose key bag and certificate bag disagree is refused at upload, not at the first signature.
 */
import { X509Certificate, createVerify, randomBytes } from 'node:crypto';
import { P12Signer } from '@libpdf/core';

/** A certificate's facts, as the API shows them. */
export interface CertificateFacts {
  subject: string;
  issuer: string;
  serial: string;
  notBefore: Date;
  notAfter: Date;
  fingerprintSha256: string;
}

/** Why a PKCS#12 file was refused; `type` is the 422 detail's type. */
export class Pkcs12Refusal extends Error {
  override readonly name = 'Pkcs12Refusal';
  constructor(
    readonly type:
      | 'pkcs12_invalid'
      | 'pkcs12_password'
      | 'pkcs12_key_mismatch'
      | 'certificate_expired'
      | 'certificate_not_yet_valid',
    message: string,
  ) {
    super(message);
  }
}

/** libpdf's words for a MAC that does not verify or a key bag it cannot decrypt: the password. */
const WRONG_PASSWORD = /integrity|mac|password|decrypt/i;

/** OpenSSL-style one-line names (`CN=Ada, O=Example`), from Node's multi-line form. */
function oneLine(name: string): string {
  return name.split('\n').filter(Boolean).join(', ');
}

/** The facts of a DER certificate. */
export function certificateFacts(der: Uint8Array): CertificateFacts {
  const cert = new X509Certificate(der);
  return {
    subject: oneLine(cert.subject),
    issuer: oneLine(cert.issuer),
    serial: cert.serialNumber.toLowerCase(),
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
    fingerprintSha256: cert.fingerprint256.replaceAll(':', '').toLowerCase(),
  };
}

/** Opens a PKCS#12 file with its password; throws Pkcs12Refusal naming the reason. */
export async function openPkcs12(p12: Uint8Array, password: string): Promise<P12Signer> {
  try {
    return await P12Signer.create(p12, password);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/ASN\.1|Invalid PKCS#12|not.*PKCS/i.test(message))
      throw new Pkcs12Refusal(
        'pkcs12_invalid',
        'The file is not a PKCS#12 (.p12/.pfx) file; export the key and certificate as PKCS#12',
      );
    if (WRONG_PASSWORD.test(message))
      throw new Pkcs12Refusal('pkcs12_password', 'The password does not open this PKCS#12 file');
    throw new Pkcs12Refusal('pkcs12_invalid', `The PKCS#12 file could not be read: ${message}`);
  }
}

/** True when the signer's key is the private half of its certificate's public key. */
async function keyMatchesCertificate(signer: P12Signer): Promise<boolean> {
  const probe = randomBytes(32);
  const signature = await signer.sign(probe, 'SHA-256');
  const publicKey = new X509Certificate(signer.certificate).publicKey;
  const verifier = createVerify('SHA256').update(probe);
  // ECDSA signatures come as DER from libpdf, which is Node's default encoding too.
  return signer.signatureAlgorithm === 'RSA-PSS'
    ? verifier.verify({ key: publicKey, padding: 6 /* RSA_PKCS1_PSS_PADDING */ }, Buffer.from(signature))
    : verifier.verify(publicKey, Buffer.from(signature));
}

/** Opens and checks a PKCS#12 file for use now: readable, the key matching, valid at `now`. */
export async function checkPkcs12(
  p12: Uint8Array,
  password: string,
  now: Date,
): Promise<{ signer: P12Signer; facts: CertificateFacts }> {
  const signer = await openPkcs12(p12, password);
  if (!(await keyMatchesCertificate(signer).catch(() => false))) {
    throw new Pkcs12Refusal(
      'pkcs12_key_mismatch',
      'The private key in the file does not belong to its certificate; export the certificate together with its own key',
    );
  }
  const facts = certificateFacts(signer.certificate);
  checkValidity(facts, now);
  return { signer, facts };
}

/** Throws when the certificate is not valid at `now`. */
export function checkValidity(facts: CertificateFacts, now: Date): void {
  if (now > facts.notAfter)
    throw new Pkcs12Refusal(
      'certificate_expired',
      `The certificate expired on ${facts.notAfter.toISOString()}; a signature made with it would not be valid`,
    );
  if (now < facts.notBefore)
    throw new Pkcs12Refusal(
      'certificate_not_yet_valid',
      `The certificate is valid only from ${facts.notBefore.toISOString()}`,
    );
}
