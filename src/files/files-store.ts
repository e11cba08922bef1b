/** SQL for generated files. */
import type { DbOrTx } from '../db/database.js';
import type { FilesTable } from '../db/schema.js';

export async function insertFile(db: DbOrTx, row: FilesTable): Promise<void> {
  await db.insertInto('files').values(row).execute();
}

export async function findFile(db: DbOrTx, fileId: string): Promise<FilesTable | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', fileId).executeTakeFirst();
}

export async function listExpiredFiles(db: DbOrTx, now: number, limit: number): Promise<FilesTable[]> {
  return db.selectFrom('files').selectAll().where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute();
}

export async function deleteFileRow(db: DbOrTx, fileId: string): Promise<void> {
  await db.deleteFrom('files').where('id', '=', fileId).execute();
}
