/** SQL for customer S3 settings. */
import type { DbOrTx } from '../db/database.js';
import type { S3IntegrationsTable } from '../db/schema.js';

export async function findIntegration(db: DbOrTx, accountId: string): Promise<S3IntegrationsTable | undefined> {
  return db.selectFrom('s3_integrations').selectAll().where('account_id', '=', accountId).executeTakeFirst();
}

export async function upsertIntegration(db: DbOrTx, row: S3IntegrationsTable): Promise<void> {
  await db
    .insertInto('s3_integrations')
    .values(row)
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({
        endpoint_url: row.endpoint_url,
        access_key_id: row.access_key_id,
        secret_access_key_sealed: row.secret_access_key_sealed,
        bucket_name: row.bucket_name,
        default_prefix: row.default_prefix,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export async function deleteIntegration(db: DbOrTx, accountId: string): Promise<void> {
  await db.deleteFrom('s3_integrations').where('account_id', '=', accountId).execute();
}
