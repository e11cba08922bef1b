/**
 * What opening a PKCS#12 file will cost, read from its ASN.1 before any password hashing (issue 49: a
 * 2.4 KB file declaring 8,388,607 rounds held the event loop for minutes). Every step that derives a key
 * from the password declares its rounds in the clear: the integrity check (MacData.iterations, or a
 * PBMAC1's PBKDF2 parameters), each encrypted safe of certificates and each shrouded key (PBES2's
 * PBKDF2 parameters, or the PKCS#12 and PKCS#5 v1 PBE parameters). A key bag inside an encrypted safe
 * is visible only once that safe is decrypted; the signing thread's deadline bounds that case.
 *
 * Walks the structure with asn1js (RFC 7292: PFX → AuthenticatedSafe → SafeContents → SafeBag) and
 * throws Pkcs12Refusal: `pkcs12_invalid` for a file of another shape or an encryption it cannot read,
 * `pkcs12_too_many_iterations` past the bounds (signing-bounds.ts).
 */
import * as asn1js from 'asn1js';
import { Pkcs12Refusal } from './pkcs12.js';
import { PKCS12_MAX_ITERATIONS, PKCS12_MAX_TOTAL_ITERATIONS } from './signing-bounds.js';

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  safeContentsBag: '1.2.840.113549.1.12.10.1.6',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  pbmac1: '1.2.840.113549.1.5.14',
} as const;

/** PKCS#12 PBE (pbeWithSHAAnd…, RFC 7292 appendix C) and PKCS#5 v1 PBES1: parameters `{salt, iterations}`. */
const SALT_AND_ROUNDS = /^1\.2\.840\.113549\.1\.(12\.1\.[1-6]|5\.(1|3|4|6|10|11))$/;

/** Nested safes followed: files carry one level; more is built to cost. */
const MAX_DEPTH = 3;

/** One step that hashes the password, and its rounds. */
export interface Pkcs12Step {
  what: 'integrity check' | 'private key' | 'certificates';
  rounds: bigint;
}

class Shape extends Error {}

function parse(bytes: ArrayBuffer | Uint8Array): asn1js.AsnType {
  const parsed = asn1js.fromBER(bytes);
  if (parsed.offset === -1) throw new Shape(parsed.result.error);
  return parsed.result;
}

function items(node: asn1js.AsnType | undefined): asn1js.AsnType[] {
  if (!(node instanceof asn1js.Sequence)) throw new Shape('a SEQUENCE was expected');
  return node.valueBlock.value;
}

function oid(node: asn1js.AsnType | undefined): string {
  if (!(node instanceof asn1js.ObjectIdentifier)) throw new Shape('an OBJECT IDENTIFIER was expected');
  return node.valueBlock.toString();
}

/** The value of an `[0] EXPLICIT` wrapper. */
function explicit(node: asn1js.AsnType | undefined): asn1js.AsnType {
  const inner =
    node instanceof asn1js.Constructed && node.idBlock.tagClass === 3 ? node.valueBlock.value[0] : undefined;
  if (!inner) throw new Shape('an explicit [0] value was expected');
  return inner;
}

function octets(node: asn1js.AsnType): ArrayBuffer {
  if (!(node instanceof asn1js.OctetString)) throw new Shape('an OCTET STRING was expected');
  return node.getValue();
}

/** A count's exact value (asn1js's `valueDec` reads 0 for one of four bytes or more); a negative one is no count. */
function integer(node: asn1js.AsnType | undefined): bigint {
  if (!(node instanceof asn1js.Integer)) throw new Shape('an INTEGER was expected');
  const value = node.toBigInt();
  if (value < 0n) throw new Shape('a negative count');
  return value;
}

/** The rounds of PBKDF2 parameters `{salt, iterationCount, keyLength?, prf?}` under a key-derivation AlgorithmIdentifier. */
function pbkdf2Rounds(kdf: asn1js.AsnType | undefined): bigint {
  const [algorithm, params] = items(kdf);
  const name = oid(algorithm);
  if (name !== OID.pbkdf2)
    throw unreadable(
      `its password is derived with ${name}, which the service does not read; export it with PBKDF2 (the default)`,
    );
  return integer(items(params)[1]);
}

/** The rounds an encryption AlgorithmIdentifier declares. */
function encryptionRounds(algorithm: asn1js.AsnType | undefined): bigint {
  const [id, params] = items(algorithm);
  const name = oid(id);
  if (name === OID.pbes2) return pbkdf2Rounds(items(params)[0]);
  if (SALT_AND_ROUNDS.test(name)) return integer(items(params)[1]);
  throw unreadable(`it is encrypted with ${name}, which the service does not read; export it with AES-256 or 3DES`);
}

function bagSteps(safeContents: asn1js.AsnType, depth: number, steps: Pkcs12Step[]): void {
  if (depth > MAX_DEPTH) throw new Shape('safes nested too deep');
  for (const bag of items(safeContents)) {
    const [bagId, value] = items(bag);
    const kind = oid(bagId);
    if (kind === OID.shroudedKeyBag)
      steps.push({ what: 'private key', rounds: encryptionRounds(items(explicit(value))[0]) });
    if (kind === OID.safeContentsBag) bagSteps(explicit(value), depth + 1, steps);
  }
}

function macSteps(macData: asn1js.AsnType | undefined): Pkcs12Step[] {
  if (macData === undefined) return [];
  const [mac, , iterations] = items(macData);
  const [digestAlgorithm] = items(mac);
  const [id, params] = items(digestAlgorithm);
  // PBMAC1 (RFC 9579): the rounds are its PBKDF2's; MacData.iterations is then ignored.
  if (oid(id) === OID.pbmac1) return [{ what: 'integrity check', rounds: pbkdf2Rounds(items(params)[0]) }];
  return [{ what: 'integrity check', rounds: iterations === undefined ? 1n : integer(iterations) }];
}

/** Every password-hashing step the file declares; throws Pkcs12Refusal when it is not a PKCS#12 this service reads. */
export function pkcs12Steps(p12: Uint8Array): Pkcs12Step[] {
  try {
    const [, authSafe, macData] = items(parse(p12));
    const [authSafeType, authSafeContent] = items(authSafe);
    if (oid(authSafeType) !== OID.data) throw unreadable('its integrity is protected by a public key, not a password');
    const steps = macSteps(macData);
    for (const contentInfo of items(parse(octets(explicit(authSafeContent))))) {
      const [type, content] = items(contentInfo);
      const kind = oid(type);
      if (kind === OID.data) bagSteps(parse(octets(explicit(content))), 1, steps);
      // EncryptedData ::= SEQUENCE { version, EncryptedContentInfo ::= SEQUENCE { contentType, contentEncryptionAlgorithm, … } }
      if (kind === OID.encryptedData)
        steps.push({ what: 'certificates', rounds: encryptionRounds(items(items(explicit(content))[1])[1]) });
    }
    return steps;
  } catch (error) {
    if (error instanceof Shape)
      throw new Pkcs12Refusal(
        'pkcs12_invalid',
        'The file is not a PKCS#12 (.p12/.pfx) file; export the key and certificate as PKCS#12',
      );
    throw error;
  }
}

/** Refuses a file that asks for more password hashing than the bounds, before any of it is done. */
export function checkPkcs12Cost(p12: Uint8Array): void {
  const steps = pkcs12Steps(p12);
  const fmt = (n: bigint | number) => n.toLocaleString('en-US');
  const worst = steps.reduce<Pkcs12Step | undefined>((a, b) => (a && a.rounds >= b.rounds ? a : b), undefined);
  const total = steps.reduce((sum, step) => sum + step.rounds, 0n);
  const advice =
    "export it again with your tool's usual settings (OpenSSL, Windows and macOS use about 2,000 rounds, Java 10,000)";
  if (worst && worst.rounds > BigInt(PKCS12_MAX_ITERATIONS)) {
    throw new Pkcs12Refusal(
      'pkcs12_too_many_iterations',
      `The file asks for ${fmt(worst.rounds)} rounds of password hashing for its ${worst.what}; the most accepted is ${fmt(PKCS12_MAX_ITERATIONS)} per step: ${advice}`,
    );
  }
  if (total > BigInt(PKCS12_MAX_TOTAL_ITERATIONS)) {
    throw new Pkcs12Refusal(
      'pkcs12_too_many_iterations',
      `The file asks for ${fmt(total)} rounds of password hashing in all (${steps.length} steps); the most accepted is ${fmt(PKCS12_MAX_TOTAL_ITERATIONS)}: ${advice}`,
    );
  }
}

function unreadable(why: string): Pkcs12Refusal {
  return new Pkcs12Refusal('pkcs12_invalid', `The PKCS#12 file cannot be read: ${why}`);
}
