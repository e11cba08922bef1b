/**
 * Signing certificates per account (issue 39): upload a PKCS#12 file with its password, list, delete,
 * and open one to sign with. The file and its password are sealed together with a key derived for this
 * purpose only (shared/crypto.ts, as customer-buckets/ seals S3 secrets); they are never returned or
 * logged. Every refusal of an upload is a 422 naming the reason (pkcs12.ts) and stores nothing. What
 * opening a file costs is read first, on the event loop, from its ASN.1 (pkcs12-costs.ts); opening it
 * — the password hashing — runs on a signing thread in a free slot of the signing pool (signing-pool.ts).
 * A certificate stored before those bounds existed is refused when a signature names it, before any charge.
 */
import type { Db } from '../db/database.js';
import type { SigningCertificatesTable } from '../db/schema.js';
import { decryptSecret, deriveKey, encryptSecret } from '../shared/crypto.js';
import { AppError, ValidationError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import * as store from './certificates-store.js';
import { certificateFacts, checkValidity, Pkcs12Refusal, type CertificateFacts } from './pkcs12.js';
import { checkPkcs12Cost } from './pkcs12-costs.js';
import type { SigningPool } from './signing-pool.js';
import { CERTIFICATE_MAX_BASE64_CHARS, CERTIFICATES_PER_ACCOUNT } from './signing-bounds.js';
import { isBase64 } from '../shared/base64.js';

/** An upload as the API receives it. */
export interface CertificateUpload {
  name: string;
  pkcs12Base64: string;
  password: string;
}

/** A stored certificate as the API shows it (no key, no password). */
export interface CertificateView {
  name: string;
  subject: string;
  issuer: string;
  serial: string;
  not_before: string;
  not_after: string;
  fingerprint_sha256: string;
}

export interface CertificateService {
  add(accountId: string, upload: CertificateUpload): Promise<CertificateView>;
  list(accountId: string): Promise<CertificateView[]>;
  remove(accountId: string, name: string): Promise<void>;
  /** Throws a 422 naming `loc` when the account has no such certificate, it is not valid now or costs too much to open; the check before a charge. */
  check(accountId: string, name: string, loc: (string | number)[]): Promise<void>;
  /** A stored certificate's PKCS#12 file and password, checked valid now (a 422 at `loc` otherwise); for the signing thread. */
  open(accountId: string, name: string, loc: (string | number)[]): Promise<{ p12: Buffer; password: string }>;
}

function refuse(loc: (string | number)[], msg: string, type: string): never {
  throw new ValidationError([{ loc, msg, type }]);
}

function view(row: store.CertificateRow): CertificateView {
  return {
    name: row.name,
    subject: row.subject,
    issuer: row.issuer,
    serial: row.serial,
    not_before: new Date(Number(row.not_before)).toISOString(),
    not_after: new Date(Number(row.not_after)).toISOString(),
    fingerprint_sha256: row.fingerprint_sha256,
  };
}

function decodePkcs12(text: string): Buffer {
  const compact = text.replace(/\s+/g, '');
  const loc = ['body', 'pkcs12_base64'];
  if (compact.length > CERTIFICATE_MAX_BASE64_CHARS)
    refuse(loc, `pkcs12_base64 may have at most ${CERTIFICATE_MAX_BASE64_CHARS} characters`, 'pkcs12_too_large');
  if (!isBase64(compact)) refuse(loc, 'pkcs12_base64 is not valid base64', 'base64_invalid');
  return Buffer.from(compact, 'base64');
}

/** What is sealed: the file and the password that opens it. */
interface SealedPkcs12 {
  p12: string;
  password: string;
}

export interface CertificateDeps {
  db: Db;
  secretKey: string;
  logger: Logger;
  /** Where an upload is opened and checked. */
  pool: Pick<SigningPool, 'openCertificate'>;
  now?: () => Date;
}

export function createCertificateService(deps: CertificateDeps): CertificateService {
  const { db } = deps;
  const sealKey = deriveKey(deps.secretKey, 'signing-certificates');
  const now = deps.now ?? (() => new Date());

  async function rowOf(accountId: string, name: string, loc: (string | number)[]) {
    const row = await store.findSealedCertificate(db, accountId, name);
    if (!row)
      refuse(
        loc,
        `No signing certificate named "${name}"; upload it with POST /v1/certificates or list yours with GET /v1/certificates`,
        'certificate_not_found',
      );
    return row;
  }

  /** The stored file and password, checked valid now and within the opening bounds; a 422 at `loc` otherwise. */
  function usable(row: SigningCertificatesTable, loc: (string | number)[]): SealedPkcs12 {
    const sealed = JSON.parse(decryptSecret(sealKey, row.pkcs12_sealed)) as SealedPkcs12;
    try {
      checkValidity(
        { notBefore: new Date(Number(row.not_before)), notAfter: new Date(Number(row.not_after)) } as CertificateFacts,
        now(),
      );
      checkPkcs12Cost(Buffer.from(sealed.p12, 'base64'));
    } catch (error) {
      if (error instanceof Pkcs12Refusal)
        refuse(
          loc,
          `Certificate "${row.name}": ${error.message}${error.type === 'pkcs12_too_many_iterations' ? '; then delete this one and upload the new file' : ''}`,
          error.type,
        );
      throw error;
    }
    return sealed;
  }

  /** The facts of an upload that opens with its password: cost bounded, then opened on a signing thread. */
  async function checkUpload(accountId: string, p12: Buffer, password: string): Promise<CertificateFacts> {
    try {
      checkPkcs12Cost(p12);
      const facts = certificateFacts(await deps.pool.openCertificate(accountId, p12, password));
      checkValidity(facts, now());
      return facts;
    } catch (error) {
      if (error instanceof Pkcs12Refusal)
        refuse(['body', error.type === 'pkcs12_password' ? 'password' : 'pkcs12_base64'], error.message, error.type);
      throw error;
    }
  }

  return {
    async add(accountId, upload) {
      const p12 = decodePkcs12(upload.pkcs12Base64);
      const facts = await checkUpload(accountId, p12, upload.password);
      if ((await store.countCertificates(db, accountId)) >= CERTIFICATES_PER_ACCOUNT) {
        refuse(
          ['body', 'name'],
          `An account may keep ${CERTIFICATES_PER_ACCOUNT} signing certificates; delete one first`,
          'too_many_certificates',
        );
      }
      const sealed: SealedPkcs12 = { p12: p12.toString('base64'), password: upload.password };
      const row = {
        account_id: accountId,
        name: upload.name,
        subject: facts.subject,
        issuer: facts.issuer,
        serial: facts.serial,
        not_before: facts.notBefore.getTime(),
        not_after: facts.notAfter.getTime(),
        fingerprint_sha256: facts.fingerprintSha256,
        pkcs12_sealed: encryptSecret(sealKey, JSON.stringify(sealed)),
        created_at: Date.now(),
      };
      try {
        await store.insertCertificate(db, row);
      } catch (error) {
        if (store.isUniqueViolation(error))
          throw new AppError(
            'CERTIFICATE_EXISTS',
            `A signing certificate named "${upload.name}" already exists; delete it first or choose another name.`,
          );
        throw error;
      }
      deps.logger.info(
        { accountId, certificate: upload.name, fingerprint: facts.fingerprintSha256 },
        'signing certificate added',
      );
      return view(row);
    },
    async list(accountId) {
      return (await store.listCertificates(db, accountId)).map(view);
    },
    async remove(accountId, name) {
      if ((await store.deleteCertificate(db, accountId, name)) === 0)
        throw new AppError('CERTIFICATE_NOT_FOUND', `No signing certificate named "${name}".`);
    },
    async check(accountId, name, loc) {
      usable(await rowOf(accountId, name, loc), loc);
    },
    async open(accountId, name, loc) {
      const sealed = usable(await rowOf(accountId, name, loc), loc);
      return { p12: Buffer.from(sealed.p12, 'base64'), password: sealed.password };
    },
  };
}
