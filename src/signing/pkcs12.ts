/**
 * Reads a PKCS#12 file as libpdf's P12Signer does, and says precisely why one cannot be used: not
 * PKCS#12, a wrong password, a key that is not the certificate's, a key too weak or of a kind not
 * accepted (RSA under 2048 bits, EC off P-256/384/521, EdDSA, DSA), a certificate not valid now. The
 * key check signs a probe and verifies it with the certificate's public key (node:crypto), so a file
 * whose key bag and certificate bag disagree is refused at upload, not at the first signature.
 * What opening costs is bounded before this is called (pkcs12-costs.ts).
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

/** The 422 detail types of a refused PKCS#12 file (docs/finishing.md "Certificates"). */
export type Pkcs12RefusalType =
  | 'pkcs12_invalid'
  | 'pkcs12_password'
  | 'pkcs12_key_mismatch'
  | 'pkcs12_too_many_iterations'
  | 'key_too_weak'
  | 'key_unsupported'
  | 'certificate_expired'
  | 'certificate_not_yet_valid';

/** Why a PKCS#12 file was refused; `type` is the 422 detail's type. */
export class Pkcs12Refusal extends Error {
  override readonly name = 'Pkcs12Refusal';
  constructor(
    readonly type: Pkcs12RefusalType,
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

/** Names of the key algorithms libpdf names by OID when it cannot sign with them. */
const KEY_ALGORITHMS: Record<string, string> = {
  '1.3.101.112': 'Ed25519',
  '1.3.101.113': 'Ed448',
  '1.2.840.10040.4.1': 'DSA',
};

/** Named curves by OID (those libpdf reports when it cannot import a key on them). */
const CURVES: Record<string, string> = {
  '1.3.132.0.10': 'secp256k1',
  '1.3.36.3.3.2.8.1.1.7': 'brainpoolP256r1',
  '1.3.36.3.3.2.8.1.1.11': 'brainpoolP384r1',
  '1.3.36.3.3.2.8.1.1.13': 'brainpoolP512r1',
};

const ACCEPTED_KEYS = 'RSA of 2048 bits or more, or ECDSA on P-256, P-384 or P-521';

/** Ed25519 and Ed448: libpdf 0.4 signs with RSA and ECDSA only, and Adobe's readers do not verify EdDSA signatures in PDFs (docs/finishing.md). */
function unsupportedAlgorithm(name: string): Pkcs12Refusal {
  return new Pkcs12Refusal(
    'key_unsupported',
    `The key is ${name}; signatures here use ${ACCEPTED_KEYS}. Make a key of one of those`,
  );
}

function unsupportedCurve(curve: string | undefined): Pkcs12Refusal {
  return new Pkcs12Refusal(
    'key_unsupported',
    `The key is on the elliptic curve ${curve ?? 'of another kind than P-256, P-384 or P-521'}; signatures here use ${ACCEPTED_KEYS}. Make a key of one of those`,
  );
}

/** Opens a PKCS#12 file with its password; throws Pkcs12Refusal naming the reason. Slow (password hashing): for a signing thread. */
export async function openPkcs12(p12: Uint8Array, password: string): Promise<P12Signer> {
  try {
    return await P12Signer.create(p12, password);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const algorithm = /Unsupported key algorithm: ([\d.]+)/.exec(message)?.[1];
    if (algorithm) throw unsupportedAlgorithm(KEY_ALGORITHMS[algorithm] ?? `of the kind ${algorithm}`);
    const curve = /Incorrect curve OID: ([\d.]+)/.exec(message)?.[1];
    if (curve || /"crv" does not match/.test(message)) throw unsupportedCurve(curve && (CURVES[curve] ?? curve));
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

/** Refuses a key too weak to sign with, or of a kind not accepted, by its certificate's public key. */
export function checkKeyStrength(certificate: Uint8Array): void {
  const key = new X509Certificate(certificate).publicKey;
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss') {
    const bits = details.modulusLength ?? 0;
    if (bits < 2048)
      throw new Pkcs12Refusal(
        'key_too_weak',
        `The key is RSA of ${bits} bits; a signature needs at least 2048 (shorter keys can be broken, and PDF readers reject them). Make a key of 2048 bits or more`,
      );
    return;
  }
  if (key.asymmetricKeyType === 'ec') {
    if (!['prime256v1', 'secp384r1', 'secp521r1'].includes(details.namedCurve ?? ''))
      throw unsupportedCurve(details.namedCurve);
    return;
  }
  throw unsupportedAlgorithm(
    key.asymmetricKeyType === 'ed25519'
      ? 'Ed25519'
      : key.asymmetricKeyType === 'ed448'
        ? 'Ed448'
        : (key.asymmetricKeyType ?? 'of an unknown kind').toUpperCase(),
  );
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

/**
 * Opens a PKCS#12 file and checks what needs its key: readable with this password, the key its
 * certificate's, strong enough. Returns the certificate (DER). Slow: on a signing thread.
 */
export async function openAndCheckPkcs12(p12: Uint8Array, password: string): Promise<Uint8Array> {
  const signer = await openPkcs12(p12, password);
  checkKeyStrength(signer.certificate);
  if (!(await keyMatchesCertificate(signer).catch(() => false))) {
    throw new Pkcs12Refusal(
      'pkcs12_key_mismatch',
      'The private key in the file does not belong to its certificate; export the certificate together with its own key',
    );
  }
  return signer.certificate;
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
