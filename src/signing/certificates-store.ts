/** SQL for signing certificates: one statement per function. */
import type { DbOrTx } from '../db/database.js';
import type { SigningCertificatesTable } from '../db/schema.js';

/** A row without its sealed key: what listings read. */
export type CertificateRow = Omit<SigningCertificatesTable, 'pkcs12_sealed'>;

const PUBLIC_COLUMNS = [
  'account_id',
  'name',
  'subject',
  'issuer',
  'serial',
  'not_before',
  'not_after',
  'fingerprint_sha256',
  'created_at',
] as const;

export async function insertCertificate(db: DbOrTx, row: SigningCertificatesTable): Promise<void> {
  await db.insertInto('signing_certificates').values(row).execute();
}

export async function listCertificates(db: DbOrTx, accountId: string): Promise<CertificateRow[]> {
  return db
    .selectFrom('signing_certificates')
    .select(PUBLIC_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('name')
    .execute();
}

export async function countCertificates(db: DbOrTx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('signing_certificates')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function findSealedCertificate(
  db: DbOrTx,
  accountId: string,
  name: string,
): Promise<SigningCertificatesTable | undefined> {
  return db
    .selectFrom('signing_certificates')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function findCertificate(
  db: DbOrTx,
  accountId: string,
  name: string,
): Promise<CertificateRow | undefined> {
  return db
    .selectFrom('signing_certificates')
    .select(PUBLIC_COLUMNS)
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Number of rows removed (0 or 1). */
export async function deleteCertificate(db: DbOrTx, accountId: string, name: string): Promise<number> {
  const result = await db
    .deleteFrom('signing_certificates')
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** True for a primary-key violation on either dialect (two uploads racing for one name). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
